import { errorCodes, type ErrorCode } from './codes';

/** One entry of a validation problem's `errors` array. */
export interface FieldError {
  field: string;
  code: string;
  message: string;
}

/**
 * A failure that renders as an RFC 7807 problem body.
 *
 * @example throw new ProblemError('stale_write', 'The task changed since you read it');
 */
export class ProblemError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extras: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail?: string,
    extras: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(detail ?? errorCodes[code].title);
    this.name = 'ProblemError';
    this.code = code;
    this.status = errorCodes[code].status;
    this.extras = extras;
    this.headers = headers;
  }
}

/** Shorthand for a 400 validation_failed with field errors. */
export function validationError(errors: FieldError[], detail?: string): ProblemError {
  return new ProblemError(
    'validation_failed',
    detail ?? (errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : 'The request body failed validation'),
    { errors },
  );
}

export interface ProblemContext {
  instance: string;
  requestId: string;
  docsBaseUrl: string;
}

/** A validation problem lists at most this many `errors`; `errorsOmitted` counts the rest. */
export const MAX_FIELD_ERRORS = 50;

/** Cut text echoed from a request to at most `max` characters. */
export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}

/** 404 resource_not_found for an id that names nothing (unknown and malformed ids get this same answer). */
export function notFound(subject: string, id: string, field?: string): ProblemError {
  const shown = clip(id, 100);
  // A body field naming the id: the problem names the field too.
  if (field) return new ProblemError('resource_not_found', `${field}: no ${subject} '${shown}' in this workspace`, { field, id: shown });
  return new ProblemError('resource_not_found', `No ${subject} '${shown}'`, { id: shown });
}

/**
 * The problem body of an error: the one place bodies are rendered. Its size
 * is bounded whatever the request held: `detail` and each field error are
 * cut to a few hundred characters, and `errors` holds at most
 * {@link MAX_FIELD_ERRORS} entries plus `errorsOmitted`.
 */
export function problemBody(err: ProblemError, ctx: ProblemContext): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: err.code,
    title: errorCodes[err.code].title,
    status: err.status,
    detail: clip(err.message, 1024),
    instance: clip(ctx.instance, 2048),
    code: err.code,
    requestId: ctx.requestId,
    docsUrl: `${ctx.docsBaseUrl}/errors/${err.code}`,
  };
  for (const [k, v] of Object.entries(err.extras)) {
    if (!(k in body)) body[k] = v;
  }
  const errors = body.errors;
  if (Array.isArray(errors)) {
    body.errors = errors.slice(0, MAX_FIELD_ERRORS).map((e: FieldError) => ({ ...e, field: clip(String(e.field), 200), message: clip(String(e.message), 500) }));
    if (errors.length > MAX_FIELD_ERRORS) body.errorsOmitted = errors.length - MAX_FIELD_ERRORS;
  }
  return body;
}
