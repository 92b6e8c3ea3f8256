import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';
import { runCached } from '../statement-cache';

/** The tables tokenByPrefix reads: a write to any other leaves its rows as they were (the token cache, auth/tokens.ts). */
export const TOKEN_TABLES: readonly string[] = ['access_tokens', 'members', 'roles', 'actors', 'oauth_families', 'oauth_clients'];

/** A token by its public prefix, with its member, role, actor and (OAuth) family and client: the one lookup of authentication. */
export async function tokenByPrefix(db: Kysely<any>, d: DialectSupport, prefix: string): Promise<Record<string, unknown> | undefined> {
  const result = await runCached<Record<string, unknown>>(db, d.name, 'auth:pat', [prefix], () => db
    .selectFrom('access_tokens as t')
    .innerJoin('members as m', 'm.id', 't.member_id')
    .innerJoin('roles as r', 'r.id', 'm.role_id')
    .leftJoin('actors as a', (j) => j.onRef('a.member_id', '=', 'm.id').onRef('a.team_id', '=', 'm.team_id'))
    // OAuth tokens die with their refresh-token family and their client.
    .leftJoin('oauth_families as f', 'f.id', 't.family_id')
    .leftJoin('oauth_clients as c', 'c.id', 't.client_id')
    .select([
      't.kind', 'f.revoked_at as family_revoked_at', 'f.macros as family_macros', 'c.revoked_at as client_revoked_at',
      't.id as token_id', 't.team_id', 't.hash', 't.scopes', 't.expires_at', 't.revoked_at', 't.last_used_at',
      'm.id as member_id', 'm.user_id', 'm.name', 'm.role', 'm.role_id', 'm.active', 'a.id as actor_id',
      // A removed (trashed) member's tokens answer token_owner_inactive; agents and automations are members of their own type.
      'm.purge_at as member_purge_at', 'm.type as member_type',
      'r.name as role_name', 'r.editable as role_editable', 'r.permissions as role_permissions',
    ])
    .where('t.prefix', '=', prefix));
  return result.rows[0];
}

/** Record a token's use (callers write at most once a minute per token). */
export async function touchToken(db: Kysely<any>, d: DialectSupport, tokenId: string, now: number): Promise<void> {
  await runCached(db, d.name, 'auth:touch', [d.encode('timestamp', now), tokenId], () => db
    .updateTable('access_tokens').set({ last_used_at: d.encode('timestamp', now) }).where('id', '=', tokenId));
}

/**
 * Active (not revoked, not expired) personal access tokens of one person,
 * across all their memberships (the 20-token cap of spec "Limits").
 */
export async function countActivePersonalTokens(repo: { db: Kysely<any>; dialect: DialectSupport }, userId: string, now: number): Promise<number> {
  const row = await repo.db.selectFrom('access_tokens as t')
    .innerJoin('members as m', 'm.id', 't.member_id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('m.user_id', '=', userId)
    .where('t.kind', '=', 'pat')
    .where('t.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', repo.dialect.encode('timestamp', now))]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Revoke a token (personal or OAuth) as of `now`: it stops authenticating at once. */
export async function revokeToken(db: Kysely<any>, d: DialectSupport, tokenId: string, now: number): Promise<void> {
  await db.updateTable('access_tokens').set({ revoked_at: d.encode('timestamp', now) }).where('id', '=', tokenId).execute();
}
