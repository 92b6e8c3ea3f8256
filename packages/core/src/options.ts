import { z } from 'zod';
import type { PmapiOptions } from './api';

/**
 * Validation of `createPmapi` options (issue 16, "Operable"): a missing store,
 * a typo in a key or a malformed value is refused at start-up with a message
 * naming the option (`pmapi: options.store is required …`), instead of a
 * TypeError deep inside or a setting silently ignored.
 */

const fn = (what: string) => z.custom<(...args: any[]) => unknown>((v) => typeof v === 'function', { message: `must be a function (${what})` });
const object = (what: string) => z.custom<object>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), { message: `must be an object (${what})` });

const store = z.custom<PmapiOptions['store']>(
  (v) => typeof v === 'object' && v !== null && 'db' in v && 'dialect' in v && typeof (v as { close?: unknown }).close === 'function',
  { message: 'must be an opened store (await openSqliteStore() or await openPostgresStore({...}))' },
);

/** A path beginning with `/`, of URL path characters, no query, fragment or empty segment. */
const basePath = z.string().refine((s) => s.startsWith('/'), {
  message: 'must start with "/"',
}).refine((s) => !s.startsWith('/') || /^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*\/?$/.test(s), {
  message: 'must be a URL path such as "/api/v3" (segments of URL path characters, no query, fragment or "//")',
});

/** Every option, keyed as {@link PmapiOptions}: adding an option there without a schema here fails the typecheck. */
const shape = {
  store,
  clock: object('a Clock, e.g. fakeClock()'),
  ids: object('an IdGenerator'),
  secret: z.union([z.string().min(1, 'must not be empty'), z.instanceof(Uint8Array)], { message: 'must be a string or a Uint8Array' }),
  basePath,
  docsBaseUrl: z.url({ message: 'must be an absolute URL' }),
  defaultLabels: z.array(z.string(), { message: 'must be an array of label names' }),
  onError: fn('err, req) => void'),
  onRequest: fn('info) => void'),
  resources: z.array(object('a resource declared with defineResource'), { message: 'must be an array of resource declarations' }),
  rateLimiter: z.union([z.literal(false), object('createRateLimiter({...})')], { message: 'must be createRateLimiter({...}) or false' }),
  clientIp: fn('req) => string | undefined'),
  webhookSender: fn('createWebhookSender() of @pmapi/webhooks'),
  oauth: z.strictObject({
    issuer: z.string({ message: "must be the issuer URL, e.g. 'https://auth.example.com'" }),
    currentMember: fn('req, host) => member id | null; host is the framework\'s own request'),
    signInUrl: fn('returnTo, host) => string'),
    renderConsent: fn('view, host) => html | { body, headers } | a Promise of either').optional(),
    loopbackAnyPort: z.boolean({ message: 'must be true or false' }).optional(),
    tokenRateLimit: z.union([z.literal(false), object('a RateLimitStore')], { message: 'must be a RateLimitStore or false' }).optional(),
  }, { message: 'must be an object: OAuthOptions { issuer, currentMember, signInUrl, renderConsent?, loopbackAnyPort?, tokenRateLimit? }' }),
  files: object('FileOptions: store, publicUrl, ...'),
  searchTimeoutMs: z.number({ message: 'must be a number of milliseconds' }).int('must be a whole number of milliseconds').positive('must be positive'),
  webhooks: z.strictObject({ allowLoopback: z.boolean({ message: 'must be true or false' }).optional() }, { message: 'must be an object: { allowLoopback?: boolean }' }),
  legacyRateLimiter: z.union([z.literal(false), object('createLegacyRateLimiter({...})')], { message: 'must be createLegacyRateLimiter({...}) or false' }),
} satisfies Record<keyof PmapiOptions, z.ZodType>;

const schema = z.strictObject(
  Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, k === 'store' ? s : s.optional()])) as unknown as Record<keyof typeof shape, z.ZodType>,
);

/** The message of one zod issue, naming the option. */
function describe(issue: z.core.$ZodIssue, input: Record<string, unknown>): string {
  if (issue.code === 'unrecognized_keys' && issue.path.length > 0) {
    return issue.keys.map((k) => `pmapi: options.${[...issue.path.map(String), k].join('.')} is not an option`).join('\n');
  }
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(shape);
    return issue.keys
      .map((k) => {
        const near = known.find((o) => o.toLowerCase() === k.toLowerCase() || distance(o.toLowerCase(), k.toLowerCase()) <= 2);
        return `pmapi: options.${k} is not an option${near ? ` (did you mean options.${near}?)` : ''}; known options: ${known.join(', ')}`;
      })
      .join('\n');
  }
  const name = `options.${issue.path.map(String).join('.')}`;
  const key = issue.path[0];
  if (key !== undefined && input[String(key)] === undefined) return `pmapi: ${name} is required: ${issue.message}`;
  if (key === 'basePath' && typeof input.basePath === 'string' && !input.basePath.startsWith('/')) {
    return `pmapi: options.basePath ${issue.message} (got '${input.basePath}'; did you mean '/${input.basePath}'?)`;
  }
  return `pmapi: ${name} ${issue.message}`;
}

/** Levenshtein distance of two short strings (typo suggestions). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/**
 * For a store opener (openSqliteStore, openPostgresStore): throw a TypeError naming every key of `given` that is
 * not one of `known`, with a did-you-mean, so `{ filname: 'app.db' }` is refused instead of quietly opening the
 * default (an in-memory database, or the default Postgres connection). Also refuses a non-object.
 */
export function checkOptionNames(fn: string, given: unknown, known: readonly string[]): void {
  if (given === undefined) return;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new TypeError(`pmapi: ${fn} takes an options object`);
  const bad = Object.keys(given).filter((k) => !known.includes(k));
  if (bad.length === 0) return;
  throw new TypeError(
    bad
      .map((k) => {
        const near = known.find((o) => o.toLowerCase() === k.toLowerCase() || distance(o.toLowerCase(), k.toLowerCase()) <= 2);
        return `pmapi: ${fn} options.${k} is not an option${near ? ` (did you mean options.${near}?)` : ''}; known options: ${known.join(', ')}`;
      })
      .join('\n'),
  );
}

/** Throw a TypeError naming every bad option (one line each), or return the options unchanged. */
export function validateOptions(o: unknown): PmapiOptions {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) {
    throw new TypeError('pmapi: createPmapi needs an options object: createPmapi({ store: await openSqliteStore() })');
  }
  const r = schema.safeParse(o);
  if (!r.success) throw new TypeError(r.error.issues.map((i) => describe(i, o as Record<string, unknown>)).join('\n'));
  return o as PmapiOptions;
}
