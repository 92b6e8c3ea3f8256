import type { z } from 'zod';
import { clip, validationError, ProblemError, type FieldError } from '../errors/problem';
import type { Resource } from '../resources/define-resource';
import { parseInstant } from '../query/parse';
import { BATCH_MAX } from '../resources/fields';
import { OversizedArray } from '../http/body';



export interface PreparedBody {
  /** Column-backed values, in engine form (timestamps in ms). */
  values: Record<string, unknown>;
  /** Relation-backed sets sent in the body: relation name → ids. */
  relations: Record<string, string[]>;
  /** expectedUpdatedAt, in ms (update only). */
  expectedUpdatedAt?: number;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Validate a create or update body against the resource's declaration:
 * retired names mapped, server-assigned fields ignored (rule 1), unknown keys
 * refused, each value checked by its field's schema, required fields present.
 */
export function prepareBody(res: Resource, body: unknown, op: 'create' | 'update'): PreparedBody {
  // No body at all creates with the defaults; a JSON `null` is not an object (400 below) except as an empty update.
  if (body === undefined || (body === null && op === 'update')) {
    if (op === 'update') throw new ProblemError('empty_update', 'The update body holds no fields');
    body = {};
  }
  if (!isPlainObject(body)) throw validationError([{ field: '', code: 'invalid_type', message: 'the body must be a JSON object' }]);
  const errors: FieldError[] = [];
  const values: Record<string, unknown> = {};
  const relations: Record<string, string[]> = {};
  let expectedUpdatedAt: number | undefined;
  const seen = new Set<string>();
  const entries = Object.entries(body);

  // Replace-the-set arrays are measured before anything looks at their elements (spec "Limits": 150 items).
  for (const [rawKey, raw] of entries) {
    const key = res.retiredFieldNames[rawKey] ?? rawKey;
    const def = res.fields[key];
    if (!def?.relation || def.mode === 'readOnly') continue;
    const received = raw instanceof OversizedArray || Array.isArray(raw) ? raw.length : 0;
    const max = def.maxItems ?? BATCH_MAX;
    if (received > max) {
      throw new ProblemError('bulk_too_large', `${key} holds ${received} ids; a bulk write takes at most ${max}`, { field: key, max, received });
    }
  }

  for (const [rawKey, raw] of entries) {
    if (op === 'update' && rawKey === 'expectedUpdatedAt') {
      const ms = typeof raw === 'string' ? parseInstant(raw) : undefined;
      if (ms === undefined) errors.push({ field: rawKey, code: 'invalid_timestamp', message: 'must be the ISO 8601 updatedAt you last read' });
      else expectedUpdatedAt = ms;
      continue;
    }
    const key = res.retiredFieldNames[rawKey] ?? rawKey;
    const def = res.fields[key];
    if (!def && res.extraResponseFields?.includes(key)) continue;
    if (!def) {
      errors.push({ field: rawKey, code: 'unrecognized_key', message: `${res.path} has no writable field '${clip(rawKey, 100)}'` });
      continue;
    }
    // A retired name and its current name together: the current one wins.
    if (key !== rawKey && key in (body as Record<string, unknown>)) continue;
    if (seen.has(key)) continue;
    seen.add(key);
    if (def.mode === 'readOnly' || !def.schema) continue;
    if (op === 'create' && def.mode === 'updateOnly') continue;
    if (raw instanceof OversizedArray) {
      errors.push({ field: key, code: 'too_big', message: `holds ${raw.length} items, more than this field allows` });
      continue;
    }
    const r = def.schema.safeParse(raw);
    if (!r.success) {
      for (const issue of r.error.issues) errors.push(issueError(issue, [key, ...issue.path.map(String)]));
      continue;
    }
    let v = r.data;
    if (def.kind === 'timestamp' && typeof v === 'string') v = Date.parse(v);
    if (def.relation) relations[def.relation] = [...new Set(v as string[])];
    else values[key] = v;
  }
  if (op === 'create') {
    for (const [key, def] of Object.entries(res.fields)) {
      // A field that was sent but failed its rule is reported once, by that rule.
      if (def.required && def.mode !== 'readOnly' && !seen.has(key) && !(def.relation && def.relation in relations)) {
        errors.push({ field: key, code: 'required', message: `${key} is required` });
      }
    }
  }
  if (errors.length) throw validationError(errors);
  if (op === 'update' && Object.keys(values).length === 0 && Object.keys(relations).length === 0) {
    throw new ProblemError('empty_update', 'The update body holds no writable fields');
  }
  return { values, relations, expectedUpdatedAt };
}

/**
 * Validate a purpose-built operation body exactly (spec rule 13): `schema`
 * is a strict object, so an unknown key is `unrecognized_key`; a missing
 * field is `required`; a rule's own code (`params.code`) is kept.
 */
export function parseOperationBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const input = body === undefined || body === null ? {} : body;
  if (!isPlainObject(input)) throw validationError([{ field: '', code: 'invalid_type', message: 'the body must be a JSON object' }]);
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const errors: FieldError[] = [];
  for (const issue of r.error.issues) {
    const at = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) errors.push({ field: [...at, k].join('.'), code: 'unrecognized_key', message: `the operation takes no field '${clip(k, 100)}'` });
      continue;
    }
    const missing = at.length === 1 && input[at[0]!] === undefined;
    errors.push(missing ? { field: at[0]!, code: 'required', message: `${at[0]} is required` } : issueError(issue, at));
  }
  throw validationError(errors);
}

/** A zod issue as a field error at `at`: a declaration's own rule names its code in `params.code`; zod's codes otherwise. */
function issueError(issue: z.core.$ZodIssue, at: readonly string[]): FieldError {
  const own = issue.code === 'custom' ? (issue.params as { code?: unknown } | undefined)?.code : undefined;
  return { field: at.join('.'), code: typeof own === 'string' ? own : issue.code, message: issue.message };
}
