import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/*
 * The OAuth 2.1 authorization server's storage (oauth/): clients, refresh-token
 * families, authorization codes, refresh tokens and the access tokens a family
 * issues. Secrets arrive here already hashed; rows go back raw (snake_case,
 * dialect-encoded) for oauth/ to read.
 */

// --- clients ----------------------------------------------------------------

/** Register a client. `secretHash` is the SHA-256 digest of a confidential client's secret, null for a public one. */
export async function insertOAuthClient(db: Kysely<any>, d: DialectSupport, c: {
  id: string; teamId: string | null; name: string; type: string; secretHash: string | null; redirectUris: readonly string[]; now: number;
}): Promise<void> {
  await db.insertInto('oauth_clients').values({
    id: c.id, team_id: c.teamId, name: c.name, type: c.type,
    secret_hash: c.secretHash, redirect_uris: d.encode('json', c.redirectUris),
    revoked_at: null, created_at: d.encode('timestamp', c.now),
  }).execute();
}

/**
 * Revoke a client as of `now`: its row first (new requests fail), then each of
 * its live families (every token it holds dies with them). False when the
 * client was unknown or already revoked.
 */
export async function revokeOAuthClient(db: Kysely<any>, d: DialectSupport, clientId: string, now: number): Promise<boolean> {
  const ts = d.encode('timestamp', now);
  const r = await db.updateTable('oauth_clients').set({ revoked_at: ts }).where('id', '=', clientId).where('revoked_at', 'is', null).executeTakeFirst();
  await db.updateTable('oauth_families').set({ revoked_at: ts }).where('client_id', '=', clientId).where('revoked_at', 'is', null).execute();
  return Number(r.numUpdatedRows) > 0;
}

/** A client's row, revoked or not. */
export async function oauthClientRow(db: Kysely<any>, clientId: string): Promise<Record<string, unknown> | undefined> {
  return db.selectFrom('oauth_clients').selectAll().where('id', '=', clientId).executeTakeFirst();
}

// --- families (one consent, its ceiling scope and every token issued under it) ---

/** Start a refresh-token family: `scopes` is its ceiling (the consented scope), `macros` the macros the consent literally asked for. */
export async function insertOAuthFamily(trx: Kysely<any>, d: DialectSupport, f: {
  id: string; clientId: string; memberId: string; teamId: string; scopes: readonly string[]; macros: readonly string[]; now: number;
}): Promise<void> {
  await trx.insertInto('oauth_families').values({
    id: f.id, client_id: f.clientId, member_id: f.memberId, team_id: f.teamId,
    scopes: d.encode('json', [...f.scopes]), macros: d.encode('json', [...f.macros]), revoked_at: null, created_at: d.encode('timestamp', f.now),
  }).execute();
}

/** A family's row, revoked or not. */
export async function oauthFamilyRow(db: Kysely<any>, familyId: string): Promise<Record<string, unknown> | undefined> {
  return db.selectFrom('oauth_families').selectAll().where('id', '=', familyId).executeTakeFirst();
}

/** Revoke a family as of `now` (a no-op when it already is): every access and refresh token it issued stops working. */
export async function revokeOAuthFamily(db: Kysely<any>, d: DialectSupport, familyId: string, now: number): Promise<void> {
  await db.updateTable('oauth_families').set({ revoked_at: d.encode('timestamp', now) }).where('id', '=', familyId).where('revoked_at', 'is', null).execute();
}

// --- authorization codes ----------------------------------------------------

/** Store an authorization code (by its digest `hash`), unconsumed, valid until `expiresAt` (ms). */
export async function insertOAuthCode(trx: Kysely<any>, d: DialectSupport, c: {
  hash: string; clientId: string; familyId: string; redirectUri: string; codeChallenge: string; expiresAt: number; now: number;
}): Promise<void> {
  await trx.insertInto('oauth_codes').values({
    hash: c.hash, client_id: c.clientId, family_id: c.familyId, redirect_uri: c.redirectUri, code_challenge: c.codeChallenge,
    expires_at: d.encode('timestamp', c.expiresAt), consumed_at: null, created_at: d.encode('timestamp', c.now),
  }).execute();
}

/**
 * Consume a one-time secret (an authorization code, a refresh token) in one
 * atomic statement: true only for the one caller that marks it consumed while
 * it is this client's, unconsumed and unexpired.
 */
async function consumeOnce(table: 'oauth_codes' | 'oauth_refresh_tokens', trx: Kysely<any>, d: DialectSupport, hash: string, clientId: string, now: number): Promise<boolean> {
  const won = await trx.updateTable(table).set({ consumed_at: d.encode('timestamp', now) })
    .where('hash', '=', hash).where('client_id', '=', clientId).where('consumed_at', 'is', null).where('expires_at', '>', d.encode('timestamp', now))
    .executeTakeFirst();
  return Number(won.numUpdatedRows) === 1;
}

/** Consume an authorization code (see consumeOnce). */
export function consumeOAuthCode(trx: Kysely<any>, d: DialectSupport, hash: string, clientId: string, now: number): Promise<boolean> {
  return consumeOnce('oauth_codes', trx, d, hash, clientId, now);
}

/** A code's row by its digest, consumed or not. */
export async function oauthCodeRow(trx: Kysely<any>, hash: string): Promise<Record<string, unknown> | undefined> {
  return trx.selectFrom('oauth_codes').selectAll().where('hash', '=', hash).executeTakeFirst();
}

// --- refresh tokens ---------------------------------------------------------

/** The family and client of a refresh token, by its digest (a read outside any transaction: not authoritative). */
export async function refreshTokenOwner(db: Kysely<any>, hash: string): Promise<{ family_id: unknown; client_id: unknown } | undefined> {
  return db.selectFrom('oauth_refresh_tokens').select(['family_id', 'client_id']).where('hash', '=', hash).executeTakeFirst();
}

/** Consume a refresh token (see consumeOnce). */
export function consumeRefreshToken(trx: Kysely<any>, d: DialectSupport, hash: string, clientId: string, now: number): Promise<boolean> {
  return consumeOnce('oauth_refresh_tokens', trx, d, hash, clientId, now);
}

/** A refresh token's row by its digest, consumed or not. */
export async function refreshTokenRow(trx: Kysely<any>, hash: string): Promise<Record<string, unknown> | undefined> {
  return trx.selectFrom('oauth_refresh_tokens').selectAll().where('hash', '=', hash).executeTakeFirst();
}

// --- what a family issues ---------------------------------------------------

/** The family's identity as the tokens it issues carry it. */
export interface IssuingFamily {
  id: string;
  clientId: string;
  memberId: string;
  teamId: string;
}

/** Store an OAuth access token (`kind` oauth; by its public `prefix` and digest `hash`) of a family, expiring at `expiresAt` (ms). */
export async function insertOAuthAccessToken(trx: Kysely<any>, d: DialectSupport, family: IssuingFamily, t: {
  id: string; prefix: string; hash: string; scopes: readonly string[]; expiresAt: number; now: number;
}): Promise<void> {
  await trx.insertInto('access_tokens').values({
    id: t.id, team_id: family.teamId, member_id: family.memberId, kind: 'oauth', prefix: t.prefix, hash: t.hash,
    scopes: d.encode('json', t.scopes), name: null, expires_at: d.encode('timestamp', t.expiresAt),
    revoked_at: null, created_at: d.encode('timestamp', t.now), family_id: family.id, client_id: family.clientId,
  }).execute();
}

/** Store a refresh token (by its digest `hash`) of a family, unconsumed, valid until `expiresAt` (ms). */
export async function insertRefreshToken(trx: Kysely<any>, d: DialectSupport, family: IssuingFamily, t: {
  hash: string; expiresAt: number; now: number;
}): Promise<void> {
  await trx.insertInto('oauth_refresh_tokens').values({
    hash: t.hash, family_id: family.id, client_id: family.clientId,
    expires_at: d.encode('timestamp', t.expiresAt), consumed_at: null, created_at: d.encode('timestamp', t.now),
  }).execute();
}

/** The ids of every membership of the person (user) `memberId` belongs to, that one included, oldest first (consent's workspace choice). */
export async function personMemberIds(db: Kysely<any>, memberId: string): Promise<string[]> {
  const rows = await db.selectFrom('members as m').innerJoin('members as o', 'o.user_id', 'm.user_id')
    .select(['o.id']).where('m.id', '=', memberId).orderBy('o.created_at').orderBy('o.id').execute();
  return rows.map((r) => r.id as string);
}

/** A member with its role's name, editability and permission list (raw columns), for the grants' role clamp; `purge_at` set means removed (trashed). */
export async function memberWithRole(db: Kysely<any>, memberId: string): Promise<Record<string, unknown> | undefined> {
  return db.selectFrom('members as m').innerJoin('roles as r', 'r.id', 'm.role_id')
    .select(['m.id', 'm.team_id', 'm.name', 'm.active', 'm.purge_at', 'r.name as role_name', 'r.editable', 'r.permissions'])
    .where('m.id', '=', memberId).executeTakeFirst();
}

// --- sweeping ---------------------------------------------------------------

/** Delete codes, refresh tokens and OAuth access tokens that expired before `before` (ms); returns how many rows went. */
export async function deleteOAuthExpiredBefore(db: Kysely<any>, d: DialectSupport, before: number): Promise<number> {
  const cutoff = d.encode('timestamp', before) as any;
  const codes = await db.deleteFrom('oauth_codes').where('expires_at', '<', cutoff).executeTakeFirst();
  const refresh = await db.deleteFrom('oauth_refresh_tokens').where('expires_at', '<', cutoff).executeTakeFirst();
  const access = await db.deleteFrom('access_tokens').where('kind', '=', 'oauth').where('expires_at', '<', cutoff).executeTakeFirst();
  return Number(codes.numDeletedRows) + Number(refresh.numDeletedRows) + Number(access.numDeletedRows);
}
