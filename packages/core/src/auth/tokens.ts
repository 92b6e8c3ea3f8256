import * as crypto from 'node:crypto';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ProblemError } from '../errors/problem';
import type { DialectSupport } from '../sql/dialect';
import type { Principal } from '../services/context';
import { tokenByPrefix, touchToken } from '../sql/queries/tokens';

/**
 * `svc_user_<prefix>_<secret>` (personal access token) or `svc_oauth_<prefix>_<secret>`
 * (OAuth 2.1 access token, same shape): prefix 12 base62, secret 40 base62.
 */
const TOKEN_RE = /^svc_(user|oauth)_([0-9A-Za-z]{12})_([0-9A-Za-z]{40})$/;
const KIND_OF: Record<string, string> = { user: 'pat', oauth: 'oauth' };
export const PAT_PREFIX_LENGTH = 12;
export const PAT_SECRET_LENGTH = 40;
/** `lastUsedAt` is recorded at most this often per token (ms). */
export const LAST_USED_GRANULARITY_MS = 60_000;

/** One-shot hashing (Node ≥ 20.12): a third of createHash's cost on the per-request token check. */
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'hex') => string }).hash;

export function sha256(s: string): string {
  return oneShot ? oneShot('sha256', s, 'hex') : createHash('sha256').update(s).digest('hex');
}

/** The same 401 for a missing-in-store, revoked, truncated or malformed token (spec "Authentication" rule 6). */
function invalidToken(): ProblemError {
  return new ProblemError('invalid_token', 'The bearer token is not valid', {}, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
}

/** Read the bearer credential from an Authorization header. */
export function bearerOf(header: string | readonly string[] | undefined): string {
  // Two Authorization headers are refused, never resolved by picking one (a front end passes repeats as an array).
  if (Array.isArray(header)) {
    if (header.length > 1) throw new ProblemError('unauthorized', 'Send exactly one Authorization header', {}, { 'WWW-Authenticate': 'Bearer' });
    header = header[0];
  }
  if (!header) {
    throw new ProblemError('unauthorized', 'Send Authorization: Bearer <token>', {}, { 'WWW-Authenticate': 'Bearer' });
  }
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header as string);
  if (!m) throw new ProblemError('unauthorized', 'Only Authorization: Bearer <token> is accepted', {}, { 'WWW-Authenticate': 'Bearer' });
  return m[1]!;
}

/**
 * Resolve a personal access token to its principal: one indexed lookup by
 * prefix, then a constant-time comparison of SHA-256 digests.
 */
/** Turns a role row into the permissions it grants (built-in roles are derived from the catalog). */
export type PermissionResolver = (role: { name: string; editable: boolean; permissions: string[] }) => ReadonlySet<string>;

/** A token's row by its prefix (tokenByPrefix, or a {@link cachedTokenLookup} of it). */
export type TokenLookup = (prefix: string) => Promise<Record<string, unknown> | undefined>;

/**
 * tokenByPrefix, remembering the rows it read for as long as the store's
 * change stamp for TOKEN_TABLES (sql/queries/tokens.ts) stays the same, i.e. until a row it
 * reads may have changed (a write to one of those tables by this process, any
 * commit by another): a remembered row
 * is always the row the statement would read now. Everything that depends on
 * the clock or on the presented secret (the hash comparison, expiry, revoked
 * flags, lastUsedAt) is still judged on every request, by `authenticate`.
 * Only rows found are kept, at most `max` of them (oldest first out), so
 * unknown prefixes cost a statement each and hold no memory.
 */
export function cachedTokenLookup(db: Kysely<any>, d: DialectSupport, changeStamp: () => number, max = 1024): TokenLookup {
  const rows = new Map<string, { stamp: number; row: Record<string, unknown> }>();
  return async (prefix) => {
    // Read before the statement: a write between the two makes the entry older than it is, never newer.
    const stamp = changeStamp();
    const hit = rows.get(prefix);
    if (hit && hit.stamp === stamp) return hit.row;
    const row = await tokenByPrefix(db, d, prefix);
    rows.delete(prefix);
    if (row) {
      if (rows.size >= max) rows.delete(rows.keys().next().value!);
      rows.set(prefix, { stamp, row });
    }
    return row;
  };
}

export async function authenticate(db: Kysely<any>, d: DialectSupport, token: string, now: number, permissionsOf: PermissionResolver, lookup?: TokenLookup): Promise<Principal> {
  const m = TOKEN_RE.exec(token);
  if (!m) throw invalidToken();
  const prefix = m[2]!;
  const row = lookup ? await lookup(prefix) : await tokenByPrefix(db, d, prefix);
  const presented = Buffer.from(sha256(token), 'hex');
  const stored = Buffer.from(row ? (row.hash as string) : '0'.repeat(64), 'hex');
  const same = stored.length === presented.length && timingSafeEqual(stored, presented);
  if (!row || !same || row.revoked_at !== null || row.kind !== KIND_OF[m[1]!]) throw invalidToken();
  if ((row.family_revoked_at ?? null) !== null || (row.client_revoked_at ?? null) !== null) throw invalidToken();
  if (row.expires_at !== null && (d.decode('timestamp', row.expires_at) as number) <= now) {
    throw new ProblemError('token_expired', 'The token has expired', {}, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
  }
  // Deactivated, or removed from the workspace (trashed): spec "Errors", token_owner_inactive.
  if (!d.decode('boolean', row.active) || (row.member_purge_at ?? null) !== null) {
    throw new ProblemError('token_owner_inactive', "The token's owner is deactivated", {}, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
  }
  const lastUsed = row.last_used_at === null ? null : (d.decode('timestamp', row.last_used_at) as number);
  if (lastUsed === null || now - lastUsed >= LAST_USED_GRANULARITY_MS) {
    // At most one write per token per minute: cheap enough for the hot path.
    await touchToken(db, d, row.token_id as string, now);
  }
  return {
    teamId: row.team_id as string,
    memberId: row.member_id as string,
    userId: row.user_id as string,
    memberName: row.name as string,
    role: row.role as string,
    roleId: row.role_id as string,
    permissions: permissionsOf({
      name: row.role_name as string,
      editable: d.decode('boolean', row.role_editable) as boolean,
      permissions: d.decode('json', row.role_permissions) as string[],
    }),
    tokenId: row.token_id as string,
    tokenExpiresAt: row.expires_at === null ? null : (d.decode('timestamp', row.expires_at) as number),
    ...(row.kind === 'oauth' ? { via: 'oauth' as const } : {}),
    ...(row.kind === 'oauth' && row.family_macros !== null && row.family_macros !== undefined ? { oauthMacros: new Set(d.decode('json', row.family_macros) as string[]) } : {}),
    scopes: new Set(d.decode('json', row.scopes) as string[]),
    actorId: (row.actor_id as string | null) ?? null,
    ...(row.member_type === 'agent' || row.member_type === 'automation' ? { identity: row.member_type as 'agent' | 'automation', actorId: null } : {}),
  };
}
