import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';
import type { Repo } from '../repo';

/** Whether the workspace lets a task complete while its dependency is open (spec Task transitions: "or team setting allows"). */
export async function allowsCompletingBlockedTasks(repo: Repo, teamId: string): Promise<boolean> {
  const ws = await repo.db.selectFrom('workspaces').select('allow_completing_blocked_tasks as allow').where('id', '=', teamId).executeTakeFirst();
  return !!ws && repo.dialect.decode('boolean', ws.allow) === true;
}

/** Create a workspace row with no owner yet (set by {@link setWorkspaceOwner} once the owner's membership exists). */
export async function insertWorkspace(
  trx: Kysely<any>, d: DialectSupport, w: { id: string; name: string; timezone: string; now: number },
): Promise<void> {
  const ts = d.encode('timestamp', w.now);
  await trx.insertInto('workspaces').values({
    id: w.id, name: w.name, timezone: w.timezone, owner_member_id: null,
    allow_completing_blocked_tasks: d.encode('boolean', false), created_at: ts, updated_at: ts,
  }).execute();
}

/** Record the workspace's owner (a member id). */
export async function setWorkspaceOwner(trx: Kysely<any>, teamId: string, ownerMemberId: string): Promise<void> {
  await trx.updateTable('workspaces').set({ owner_member_id: ownerMemberId }).where('id', '=', teamId).execute();
}

/** Set the workspace setting {@link allowsCompletingBlockedTasks} reads. */
export async function setAllowCompletingBlockedTasks(db: Kysely<any>, d: DialectSupport, teamId: string, allow: boolean): Promise<void> {
  await db.updateTable('workspaces').set({ allow_completing_blocked_tasks: d.encode('boolean', allow) })
    .where('id', '=', teamId).execute();
}

/** A workspace's name; undefined when there is no such workspace. */
export async function workspaceName(db: Kysely<any>, teamId: string): Promise<string | undefined> {
  const ws = await db.selectFrom('workspaces').select(['id', 'name']).where('id', '=', teamId).executeTakeFirst();
  return ws?.name as string | undefined;
}

/** A workspace's timezone (an IANA name; 'UTC' unless the embedding application set another). */
export async function workspaceTimezone(repo: Repo, teamId: string): Promise<string> {
  const ws = await repo.db.selectFrom('workspaces').select('timezone').where('id', '=', teamId).executeTakeFirst();
  return typeof ws?.timezone === 'string' && ws.timezone ? ws.timezone : 'UTC';
}
