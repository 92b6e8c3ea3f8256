import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';
import type { Repo } from '../repo';

/**
 * The id of a member's human actor in a workspace, creating the actor row
 * first when it has none (`id` is used only then). Insert-or-ignore on
 * (team_id, member_id), then read back: concurrent writers end with one actor.
 */
export async function ensureMemberActor(
  trx: Kysely<any>, d: DialectSupport, table: string,
  a: { id: string; teamId: string; memberId: string; displayName: string; now: number },
): Promise<string> {
  const ts = d.encode('timestamp', a.now);
  await trx.insertInto(table).values({
    id: a.id, team_id: a.teamId, type: 'human', display_name: a.displayName,
    member_id: a.memberId, created_at: ts, updated_at: ts,
  }).onConflict((oc) => oc.columns(['team_id', 'member_id']).doNothing()).execute();
  const row = await trx.selectFrom(table).select('id')
    .where('team_id', '=', a.teamId).where('member_id', '=', a.memberId).executeTakeFirstOrThrow();
  return row.id as string;
}

/**
 * The id of a workspace's service actor of `type` (the reminders job's
 * `cron` actor), creating it first when missing. Its id is derived from the
 * workspace and the name (`id`), so concurrent runs insert one row.
 */
export async function ensureServiceActor(
  trx: Kysely<any>, d: DialectSupport, table: string,
  a: { id: string; teamId: string; type: string; displayName: string; now: number },
): Promise<string> {
  const ts = d.encode('timestamp', a.now);
  await trx.insertInto(table).values({
    id: a.id, team_id: a.teamId, type: a.type, display_name: a.displayName, member_id: null, created_at: ts, updated_at: ts,
  }).onConflict((oc) => oc.column('id').doNothing()).execute();
  return a.id;
}

/** The display name of a workspace's system actor, who stamps what the service changes on its own. */
export const SYSTEM_ACTOR_NAME = 'System';

/** A workspace's `systemDefault` actor id: a UUID derived from the workspace, so concurrent first writes make one row. */
export function systemActorId(teamId: string): string {
  return derivedUuid(`pmapi system actor ${teamId}`);
}

/** A name-derived UUID (version-5 layout, SHA-256): every process derives the same id for the same service actor. */
export function derivedUuid(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The actor id of an agent's or automation's membership: a UUID derived from it, so concurrent first writes make one row. */
export function identityActorId(memberId: string): string {
  return derivedUuid(`pmapi identity actor ${memberId}`);
}

/**
 * The actor of an agent or an automation (docs/not-shown.md "Agents and
 * automations"), created on its first write: type `agent` (agentId its
 * membership id) or `automation` (agentId null); memberId null, as the spec
 * says of every non-human actor.
 */
export async function ensureIdentityActor(
  trx: Kysely<any>, d: DialectSupport, table: string,
  a: { teamId: string; memberId: string; type: 'agent' | 'automation'; displayName: string; now: number },
): Promise<string> {
  const id = identityActorId(a.memberId);
  const ts = d.encode('timestamp', a.now);
  await trx.insertInto(table).values({
    id, team_id: a.teamId, type: a.type, display_name: a.displayName, member_id: null,
    agent_id: a.type === 'agent' ? a.memberId : null, created_at: ts, updated_at: ts,
  }).onConflict((oc) => oc.column('id').doNothing()).execute();
  return id;
}

/**
 * Erase a person's actor in one workspace (spec "Actor"): `tombstonedAt`
 * set, `displayName` the placeholder, `memberId` null. Records pointing at
 * the actor keep its id. Returns the actor id, or undefined when the member never wrote.
 */
export async function tombstoneMemberActor(
  trx: Kysely<any>, d: DialectSupport, table: string, a: { teamId: string; memberId: string; placeholder: string; now: number },
): Promise<string | undefined> {
  const row = await trx.selectFrom(table).select('id').where('team_id', '=', a.teamId).where('member_id', '=', a.memberId).executeTakeFirst();
  if (!row) return undefined;
  const ts = d.encode('timestamp', a.now);
  await trx.updateTable(table).set({ display_name: a.placeholder, member_id: null, tombstoned_at: ts, updated_at: ts }).where('id', '=', row.id).execute();
  return row.id as string;
}

/** An agent's actor once the agent is gone (spec "Actor": agentId null after deletion; tombstonedAt set). */
export async function tombstoneAgentActor(trx: Kysely<any>, d: DialectSupport, table: string, a: { memberId: string; now: number }): Promise<void> {
  const ts = d.encode('timestamp', a.now);
  await trx.updateTable(table).set({ agent_id: null, tombstoned_at: ts, updated_at: ts })
    .where('id', '=', identityActorId(a.memberId)).where('tombstoned_at', 'is', null).execute();
}

/** {@link ensureServiceActor} through a hook's repo (in its transaction): the one way a service actor row is written. */
export function ensureServiceActorIn(repo: Repo, table: string, a: { id: string; teamId: string; type: string; displayName: string; now: number }): Promise<string> {
  return ensureServiceActor(repo.db, repo.dialect, table, a);
}
