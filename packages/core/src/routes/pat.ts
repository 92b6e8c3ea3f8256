import { z } from 'zod';
import type { CustomRoute } from '../http/routes';
import type { WriteContext } from '../services/context';
import type { OpResult } from '../services/engine';
import { clip, notFound, ProblemError, validationError, type FieldError } from '../errors/problem';
import { grants, isValidScope, SCOPE_MACROS, type ScopeAction } from '../auth/scopes';
import { mintToken } from '../auth/mint';
import { iso } from '../clock/index';
import { OversizedArray } from '../http/body';
import { nextCursor, PAGE_PARAMS, parsePageQuery, singleParams, unknownParam, type PageSpec } from '../query/page';
import { takePage, v3Page } from '../presenters/v3';

const PAT_SUBJECT = 'personal access token';

/**
 * /personal-access-tokens: create, list, read, update, revoke (spec
 * "Authentication" rules 2-7; bodies not shown in the spec: docs/not-shown.md
 * "Personal access tokens"). A member sees and changes only their own tokens;
 * no webhook events are emitted (tokens are not in the event catalog).
 */

/** The scope resource of these routes (`personal-access-tokens:read|write|delete`). */
export const PAT_RESOURCE = 'personal-access-tokens';
/** Spec "Limits": 20 active personal access tokens per user. */
export const PAT_CAP = 20;
export const PAT_NAME_MAX = 100;

const ACTIONS: readonly ScopeAction[] = ['read', 'write', 'delete'];
const MACROS: ReadonlySet<string> = new Set(SCOPE_MACROS);
const ISO = z.iso.datetime({ offset: true });

interface TokenRow {
  id: string;
  name: string | null;
  prefix: string;
  memberId: string;
  scopes: string[];
  expiresAt: number | null;
  lastUsedAt: number | null;
  revokedAt: number | null;
  createdAt: number;
}

const COLUMNS = ['id', 'name', 'prefix', 'member_id', 'scopes', 'expires_at', 'last_used_at', 'revoked_at', 'created_at'] as const;

function decodeRow(ctx: WriteContext, r: Record<string, unknown>): TokenRow {
  const d = ctx.repo.dialect;
  const ts = (v: unknown) => (v === null || v === undefined ? null : (d.decode('timestamp', v) as number));
  return {
    id: r.id as string,
    name: (r.name as string | null) ?? null,
    prefix: r.prefix as string,
    memberId: r.member_id as string,
    scopes: d.decode('json', r.scopes) as string[],
    expiresAt: ts(r.expires_at),
    lastUsedAt: ts(r.last_used_at),
    revokedAt: ts(r.revoked_at),
    createdAt: ts(r.created_at)!,
  };
}

function statusOf(t: TokenRow, now: number): 'active' | 'expired' | 'revoked' {
  if (t.revokedAt !== null) return 'revoked';
  if (t.expiresAt !== null && t.expiresAt <= now) return 'expired';
  return 'active';
}

/** The wire form of a token: never its secret or digest. */
function present(t: TokenRow, now: number): Record<string, unknown> {
  const at = (v: number | null) => (v === null ? null : iso(v));
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    memberId: t.memberId,
    scopes: t.scopes,
    status: statusOf(t, now),
    expiresAt: at(t.expiresAt),
    lastUsedAt: at(t.lastUsedAt),
    revokedAt: at(t.revokedAt),
    createdAt: iso(t.createdAt),
  };
}

/** Does a scope set already grant scope `s`? `write` implies `read`; a macro is implied only by a macro. */
export function scopeImplied(held: ReadonlySet<string>, s: string): boolean {
  const i = s.indexOf(':');
  if (i === -1) return held.has(s) || (s === 'read' && held.has('write'));
  return grants(held, s.slice(0, i), s.slice(i + 1) as ScopeAction);
}

/** Resources a scope may name: every declared resource and the tokens themselves. */
function scopeResources(ctx: WriteContext): string[] {
  return [...ctx.registry.byPath.keys(), PAT_RESOURCE];
}

/**
 * Do the scopes, expanded (macros → every resource, write ⇒ read), meet the
 * role's permissions? Only role permissions count: the token scopes
 * (`personal-access-tokens:*`) are no role permission, so a token that could
 * only manage tokens is empty too.
 */
function intersectsRole(ctx: WriteContext, scopes: readonly string[]): boolean {
  const requested = new Set(scopes);
  const perms = ctx.principal.permissions;
  for (const r of ctx.registry.byPath.keys()) {
    for (const a of ACTIONS) if (grants(requested, r, a) && grants(perms, r, a)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Bodies

function asObject(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw validationError([{ field: '', code: 'invalid_type', message: 'the body must be a JSON object' }]);
  }
  return body as Record<string, unknown>;
}

function parseName(v: unknown, errors: FieldError[]): string | undefined {
  if (typeof v !== 'string') {
    errors.push({ field: 'name', code: 'invalid_type', message: 'must be a string' });
    return undefined;
  }
  const name = v.trim();
  if (name.length === 0) errors.push({ field: 'name', code: 'too_short', message: 'must not be empty' });
  else if (name.length > PAT_NAME_MAX) errors.push({ field: 'name', code: 'too_long', message: `must be at most ${PAT_NAME_MAX} characters` });
  return name;
}

function parseScopes(ctx: WriteContext, v: unknown, errors: FieldError[]): string[] | undefined {
  if (v instanceof OversizedArray) {
    errors.push({ field: 'scopes', code: 'too_big', message: `holds ${v.length} entries, more than there are scopes` });
    return undefined;
  }
  if (!Array.isArray(v)) {
    errors.push({ field: 'scopes', code: 'invalid_type', message: 'must be an array of scope strings' });
    return undefined;
  }
  if (v.length === 0) {
    errors.push({ field: 'scopes', code: 'too_short', message: 'must name at least one scope' });
    return undefined;
  }
  const known = new Set(scopeResources(ctx));
  // A useful list is no longer than the catalog (every resource × read, write, delete, and the three macros);
  // twice that leaves room for repeats. Longer is refused before any element is looked at.
  const max = 2 * (known.size * ACTIONS.length + MACROS.size);
  if (v.length > max) {
    errors.push({ field: 'scopes', code: 'too_big', message: `holds ${v.length} entries; at most ${max}` });
    return undefined;
  }
  const out = new Set<string>();
  v.forEach((s, i) => {
    if (typeof s !== 'string' || !isValidScope(s) || (!MACROS.has(s) && !known.has(s.slice(0, s.indexOf(':'))))) {
      errors.push({ field: `scopes[${i}]`, code: 'invalid_scope', message: `must be read, write, delete or <resource>:<read|write|delete> with a known resource` });
    } else out.add(s);
  });
  return [...out];
}

/** `expiresAt`: an ISO 8601 instant in the future, or null (no expiry). */
function parseExpiry(ctx: WriteContext, v: unknown, errors: FieldError[]): number | null | undefined {
  if (v === null) return null;
  if (typeof v !== 'string' || !ISO.safeParse(v).success) {
    errors.push({ field: 'expiresAt', code: 'invalid_timestamp', message: 'must be an ISO 8601 timestamp with offset, or null' });
    return undefined;
  }
  const ms = Date.parse(v);
  if (!(ms > ctx.now)) {
    errors.push({ field: 'expiresAt', code: 'in_past', message: 'must be in the future' });
    return undefined;
  }
  return ms;
}

function unknownKeys(o: Record<string, unknown>, allowed: readonly string[], errors: FieldError[]): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) errors.push({ field: clip(k, 100), code: 'unrecognized_key', message: `unknown field; allowed: ${allowed.join(', ')}` });
}

// ---------------------------------------------------------------------------
// Storage

async function findOwn(ctx: WriteContext, id: string): Promise<TokenRow> {
  const row = await ctx.db.selectFrom('access_tokens').select([...COLUMNS])
    .where('id', '=', id).where('team_id', '=', ctx.teamId).where('member_id', '=', ctx.principal.memberId).where('kind', '=', 'pat')
    .executeTakeFirst();
  if (!row) throw notFound(PAT_SUBJECT, id);
  return decodeRow(ctx, row);
}

/** Active (not revoked, not expired) personal tokens of the calling user, across all their memberships. */
async function countActive(ctx: WriteContext): Promise<number> {
  const d = ctx.repo.dialect;
  const row = await ctx.db.selectFrom('access_tokens as t')
    .innerJoin('members as m', 'm.id', 't.member_id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('m.user_id', '=', ctx.principal.userId)
    .where('t.kind', '=', 'pat')
    .where('t.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', d.encode('timestamp', ctx.now))]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---------------------------------------------------------------------------
// Routes

async function create(ctx: WriteContext, body: unknown): Promise<OpResult> {
  const o = asObject(body);
  const errors: FieldError[] = [];
  unknownKeys(o, ['name', 'scopes', 'expiresAt'], errors);
  if (o.name === undefined) errors.push({ field: 'name', code: 'required', message: 'is required' });
  const name = o.name === undefined ? undefined : parseName(o.name, errors);
  if (o.scopes === undefined) errors.push({ field: 'scopes', code: 'required', message: 'is required' });
  const scopes = o.scopes === undefined ? undefined : parseScopes(ctx, o.scopes, errors);
  const expiresAt = o.expiresAt === undefined ? null : parseExpiry(ctx, o.expiresAt, errors);
  if (errors.length) throw validationError(errors);

  // A token cannot mint a token that may do more than itself.
  const beyond = scopes!.filter((s) => !scopeImplied(ctx.principal.scopes, s));
  if (beyond.length) {
    throw new ProblemError('permission_denied', `This token cannot grant scopes it does not hold: ${beyond.join(', ')}`, { missingPermissions: beyond });
  }
  if (!intersectsRole(ctx, scopes!)) {
    throw new ProblemError('cannot_create_empty_token', "The requested scopes grant nothing the creator's role permits", { scopes: scopes! });
  }
  // Nor outlive itself: the new token expires no later than the calling one.
  const callerExpiry = ctx.principal.tokenExpiresAt ?? null;
  if (callerExpiry !== null && (expiresAt === null || (expiresAt as number) > callerExpiry)) {
    if (o.expiresAt !== undefined) throw beyondCallerExpiry(callerExpiry);
  }
  const effectiveExpiry = callerExpiry !== null && (expiresAt === null || (expiresAt as number) > callerExpiry) ? callerExpiry : expiresAt;
  // One user's concurrent creations take turns (Postgres; SQLite serialises writers).
  await ctx.repo.lock('users', ctx.principal.userId);
  const active = await countActive(ctx);
  if (active >= PAT_CAP) {
    throw new ProblemError('pat_cap_reached', `At most ${PAT_CAP} active personal access tokens per user; revoke one first`, { max: PAT_CAP, active });
  }
  const minted = await mintToken(ctx.db, ctx.repo.dialect, ctx.ids, {
    teamId: ctx.teamId, memberId: ctx.principal.memberId, scopes: scopes!, name: name!, expiresAt: effectiveExpiry!, now: ctx.now,
  });
  const rec = present({
    id: minted.id, name: name!, prefix: minted.prefix, memberId: ctx.principal.memberId, scopes: scopes!,
    expiresAt: effectiveExpiry!, lastUsedAt: null, revokedAt: null, createdAt: ctx.now,
  }, ctx.now);
  // The secret is shown here only; an Idempotency-Key replay answers without it, so it is never stored.
  return { status: 201, body: { ...rec, token: minted.token }, replay: { status: 201, body: rec } };
}

async function update(ctx: WriteContext, id: string, body: unknown): Promise<OpResult> {
  const o = asObject(body === undefined ? {} : body);
  const errors: FieldError[] = [];
  unknownKeys(o, ['name', 'scopes', 'expiresAt'], errors);
  const name = o.name === undefined ? undefined : parseName(o.name, errors);
  const scopes = o.scopes === undefined ? undefined : parseScopes(ctx, o.scopes, errors);
  const expiresAt = o.expiresAt === undefined ? undefined : parseExpiry(ctx, o.expiresAt, errors);
  if (errors.length) throw validationError(errors);
  if (name === undefined && scopes === undefined && o.expiresAt === undefined) {
    throw new ProblemError('empty_update', 'Send at least one of name, scopes, expiresAt');
  }
  const d = ctx.repo.dialect;
  await ctx.repo.lock('access_tokens', id);
  const t = await findOwn(ctx, id);
  const status = statusOf(t, ctx.now);
  if (status !== 'active') throw new ProblemError('conflict', `The token is ${status} and can no longer change`, { status });

  // The calling token may only manage tokens that can do no more than itself, and extend them no further than its own life.
  const beyondCaller = t.scopes.filter((sc) => !scopeImplied(ctx.principal.scopes, sc));
  if (beyondCaller.length) {
    throw new ProblemError('permission_denied', `This token cannot change a token broader than itself (${beyondCaller.join(', ')})`, { missingPermissions: beyondCaller });
  }
  const callerExpiry = ctx.principal.tokenExpiresAt ?? null;
  if (o.expiresAt !== undefined && callerExpiry !== null && (expiresAt === null || (expiresAt as number) > callerExpiry)) throw beyondCallerExpiry(callerExpiry);
  const set: Record<string, unknown> = {};
  if (scopes !== undefined) {
    const held = new Set(t.scopes);
    const added = scopes.filter((s) => !scopeImplied(held, s));
    if (added.length) throw new ProblemError('cannot_broaden_scope', `An update cannot add scopes: ${added.join(', ')}`, { addedScopes: added });
    if (!intersectsRole(ctx, scopes)) {
      throw new ProblemError('cannot_create_empty_token', "The remaining scopes would grant nothing the owner's role permits", { scopes });
    }
    set.scopes = d.encode('json', scopes);
    t.scopes = scopes;
  }
  if (o.expiresAt !== undefined) {
    const next = expiresAt as number | null;
    if (next !== null && (t.expiresAt === null || next < t.expiresAt)) {
      throw new ProblemError('cannot_shorten_expiry', 'An update can only keep or extend the expiry', {
        currentExpiresAt: t.expiresAt === null ? null : iso(t.expiresAt),
      });
    }
    set.expires_at = next === null ? null : d.encode('timestamp', next);
    t.expiresAt = next;
  }
  if (name !== undefined) {
    set.name = name;
    t.name = name;
  }
  await ctx.db.updateTable('access_tokens').set(set).where('id', '=', t.id).execute();
  return { status: 200, body: present(t, ctx.now) };
}

function beyondCallerExpiry(callerExpiry: number): ProblemError {
  return new ProblemError('validation_failed', 'expiresAt may not be later than the expiry of the token making the request', {
    errors: [{ field: 'expiresAt', code: 'exceeds_caller_expiry', message: `must be at most ${iso(callerExpiry)}` }],
  });
}

async function revoke(ctx: WriteContext, id: string): Promise<OpResult> {
  await ctx.repo.lock('access_tokens', id);
  const t = await findOwn(ctx, id);
  // Revoking twice keeps the first instant.
  if (t.revokedAt === null) {
    await ctx.db.updateTable('access_tokens').set({ revoked_at: ctx.repo.dialect.encode('timestamp', ctx.now) }).where('id', '=', t.id).execute();
  }
  return { status: 204 };
}

/** Tokens page like every list (one parser, signed cursors bound to the caller), newest first by default. */
const PAT_PAGE: PageSpec = {
  endpoint: PAT_RESOURCE,
  sorts: { fields: new Set(['createdAt']), default: '-createdAt', resource: PAT_RESOURCE },
};

async function list(ctx: WriteContext, query: URLSearchParams): Promise<OpResult> {
  const params = singleParams(query);
  for (const k of params.keys()) if (!PAGE_PARAMS.has(k)) throw unknownParam(k, ['limit', 'cursor', 'sort', 'includeTotal'], PAT_RESOURCE);
  // A cursor is valid only for the member it was issued to.
  const bind = { teamId: ctx.teamId, now: ctx.now, cursorSecret: ctx.cursorSecret, binding: ctx.principal.memberId };
  const page = parsePageQuery(params, PAT_PAGE, bind);
  const { desc, key } = page.sort!;
  const d = ctx.repo.dialect;
  const own = () => ctx.db.selectFrom('access_tokens')
    .where('team_id', '=', ctx.teamId).where('member_id', '=', ctx.principal.memberId).where('kind', '=', 'pat');
  let q = own().select([...COLUMNS]);
  if (page.after) {
    if (typeof page.after.value !== 'number') throw new ProblemError('cursor_invalid', 'The cursor is not valid here: malformed');
    const at = d.encode('timestamp', page.after.value);
    const id = page.after.id;
    const cmp = desc ? '<' : '>';
    q = q.where((eb) => eb.or([eb('created_at', cmp, at), eb.and([eb('created_at', '=', at), eb('id', cmp, id)])]));
  }
  const dir = desc ? 'desc' : 'asc';
  const rows = (await q.orderBy('created_at', dir).orderBy('id', dir).limit(page.limit + 1).execute()).map((r) => decodeRow(ctx, r));
  const { rows: shown, hasMore } = takePage(rows, page.limit);
  const last = shown[shown.length - 1];
  const total = page.includeTotal ? Number((await own().select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n) : undefined;
  return v3Page({
    data: shown.map((t) => present(t, ctx.now)), ...(total !== undefined ? { total } : {}), limit: page.limit, hasMore,
    nextCursor: hasMore && last ? nextCursor(PAT_PAGE, bind, key, last.createdAt, last.id) : null,
  });
}

export const patRoutes: CustomRoute[] = [
  {
    method: 'POST', path: PAT_RESOURCE, scope: { resource: PAT_RESOURCE, action: 'write' }, ownRecords: true, write: true, subject: PAT_SUBJECT,
    run: (ctx, { body }) => create(ctx, body),
  },
  {
    method: 'GET', path: PAT_RESOURCE, scope: { resource: PAT_RESOURCE, action: 'read' }, ownRecords: true, write: false, subject: PAT_SUBJECT,
    run: (ctx, { query }) => list(ctx, query),
  },
  {
    method: 'GET', path: `${PAT_RESOURCE}/{id}`, scope: { resource: PAT_RESOURCE, action: 'read' }, ownRecords: true, write: false, subject: PAT_SUBJECT,
    run: async (ctx, { params }) => ({ status: 200, body: present(await findOwn(ctx, params.id!), ctx.now) }),
  },
  {
    method: 'PATCH', path: `${PAT_RESOURCE}/{id}`, scope: { resource: PAT_RESOURCE, action: 'write' }, ownRecords: true, write: true, subject: PAT_SUBJECT,
    run: (ctx, { params, body }) => update(ctx, params.id!, body),
  },
  {
    method: 'DELETE', path: `${PAT_RESOURCE}/{id}`, scope: { resource: PAT_RESOURCE, action: 'delete' }, ownRecords: true, write: true, subject: PAT_SUBJECT,
    run: (ctx, { params }) => revoke(ctx, params.id!),
  },
];
