import type { Repo } from '../repo';

/** Whether the workspace lets a task complete while its dependency is open (spec Task transitions: "or team setting allows"). */
export async function allowsCompletingBlockedTasks(repo: Repo, teamId: string): Promise<boolean> {
  const ws = await repo.db.selectFrom('workspaces').select('allow_completing_blocked_tasks as allow').where('id', '=', teamId).executeTakeFirst();
  return !!ws && repo.dialect.decode('boolean', ws.allow) === true;
}
