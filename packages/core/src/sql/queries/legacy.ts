import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/*
 * Reads only the legacy v1.0 surface needs (http/legacy.ts): the OAuth apps
 * a workspace sees (spec "Legacy app") and the members behind actor ids
 * (a legacy label's `created_by`). Rows go back raw (snake_case, dialect-encoded).
 */

/**
 * The apps of a workspace: live (not revoked) OAuth clients registered for it
 * (`team_id`), or holding a live family (a connection approved by one of its
 * members). Oldest first, then by id; `offset`/`limit` page them.
 */
export async function workspaceApps(db: Kysely<any>, teamId: string, o: { limit: number; offset: number; id?: string }): Promise<Record<string, unknown>[]> {
  let q = db.selectFrom('oauth_clients').selectAll()
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([
      eb('team_id', '=', teamId),
      eb('id', 'in', eb.selectFrom('oauth_families').select('client_id').where('team_id', '=', teamId).where('revoked_at', 'is', null)),
    ]));
  if (o.id !== undefined) q = q.where('id', '=', o.id);
  return q.orderBy('created_at').orderBy('id').limit(o.limit).offset(o.offset).execute();
}

/** The scopes of the live families of `clientIds` in a workspace, one list per client (union of its families'). */
export async function appFamilyScopes(db: Kysely<any>, d: DialectSupport, teamId: string, clientIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  if (clientIds.length === 0) return out;
  const rows = await db.selectFrom('oauth_families').select(['client_id', 'scopes'])
    .where('team_id', '=', teamId).where('revoked_at', 'is', null).where('client_id', 'in', [...clientIds]).execute();
  for (const r of rows) {
    const set = out.get(r.client_id as string) ?? new Set<string>();
    for (const s of d.decode('json', r.scopes) as string[]) set.add(s);
    out.set(r.client_id as string, set);
  }
  return out;
}

/** The member id behind each human actor id of a workspace (agents, automations and the system have none). */
export async function membersOfActors(db: Kysely<any>, teamId: string, actorIds: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (actorIds.length === 0) return out;
  const rows = await db.selectFrom('actors').select(['id', 'member_id'])
    .where('team_id', '=', teamId).where('id', 'in', [...new Set(actorIds)]).execute();
  for (const r of rows) if (r.member_id !== null && r.member_id !== undefined) out.set(r.id as string, r.member_id as string);
  return out;
}
