import type { Kysely } from 'kysely';
import type { Engine } from '../services/engine';
import type { PendingEvent, Principal, WriteContext } from '../services/context';
import type { Rec } from '../resources/define-resource';
import type { SqlStore } from '../sql/dialect';
import { Repo } from '../sql/repo';
import { announce, insertRecord, stampChange } from '../services/records';
import { derivedUuid, ensureServiceActor } from '../sql/queries/actors';
import {
  dropOrphanOverdueChecks, dueReminders, markOverdueChecked, overdueRecipients, staleReminders, tasksNeedingOverdue,
} from '../sql/queries/reminders';
import { effectivePermissions } from '../auth/roles';
import { ProblemError } from '../errors/problem';

/*
 * The reminders job (spec "Reminder": overdue reminders are created by the
 * service from due dates; a reminder that comes due produces its
 * notification). Every decision: docs/not-shown.md "Reminders". One run:
 *
 * 1. removes reminders that no longer hold (`reminder.removed`): overdue
 *    ones whose task is gone, completed or archived, whose dueAt was cleared
 *    or changed, whose project is trashed or archived, or whose recipient is
 *    no longer an assignee (the creator, for a task without assignees), no
 *    longer an active member, or can no longer open the project; custom
 *    ones whose task is gone or whose creator can no longer open the
 *    project (they could neither read nor delete it);
 * 2. creates an overdue reminder for each task whose dueAt has passed, not
 *    completed nor archived, in a live, unarchived project, that has none
 *    for that dueAt yet: one per assignee (the task's creator when it has
 *    none) who is an active member able to open the task's project; `date`
 *    is the task's dueAt (`reminder.created`). The task is re-read under a
 *    row lock first, so a delete committing meanwhile is seen. A task with
 *    nobody to remind is marked checked for its dueAt and not scanned again;
 * 3. fires every reminder whose date has come and that has not fired: it
 *    stamps `firedAt` and emits `reminder.updated` once, to the creator's
 *    webhooks only (the reminder is private to them). A reminder whose
 *    creator is no longer active or can no longer open its project is
 *    removed instead (`reminder.removed`), never fired.
 *
 * Each step handles at most `maxBatches` batches of `batch` rows a run
 * (`more` says a run stopped there). Writes are attributed to the
 * workspace's `cron` actor ("Reminders") and the events' triggeredBy is the
 * system. Time comes from the injected clock only. Running it twice creates,
 * removes and fires nothing twice (an overdue reminder is unique per task,
 * recipient and dueAt; firing re-reads the row under its lock). On Postgres
 * each batch's transaction takes a lock named for the job in the schema in
 * use: batches of two runners never interleave, and a runner that finds
 * another's batch in progress stops and answers `skipped: true`.
 */

export interface RemindersJobResult {
  /** Overdue reminders created. */
  created: number;
  /** Reminders removed: overdue ones that no longer hold, and ones whose creator can no longer be told. */
  removed: number;
  /** Reminders that came due and fired (their `reminder.updated` notification). */
  fired: number;
  /** True when another runner held the job (Postgres): this run stopped there; the other one carries on. */
  skipped: boolean;
  /** True when a step stopped at its cap for one run: there is more to do at the next run. */
  more: boolean;
}

export interface RemindersJobOptions {
  /** Rows handled per transaction (default 200). */
  batch?: number;
  /** Batches each step handles at most per run (default 10). */
  maxBatches?: number;
}

/** Rows handled per transaction. */
const BATCH = 200;
/** Batches each step handles at most per run: a run's work is bounded whatever the backlog. */
const MAX_BATCHES = 10;
export const REMINDERS_ACTOR_NAME = 'Reminders';

/** The id of a workspace's reminders actor: a UUID derived from the workspace, so every process agrees on it. */
export function remindersActorId(teamId: string): string {
  return derivedUuid(`pmapi reminders cron actor ${teamId}`);
}

export async function runRemindersJob(engine: Engine, store: SqlStore, system: Principal, opts: RemindersJobOptions = {}): Promise<RemindersJobResult> {
  const out: RemindersJobResult = { created: 0, removed: 0, fired: 0, skipped: false, more: false };
  const size = Math.max(1, opts.batch ?? BATCH);
  const maxBatches = Math.max(1, opts.maxBatches ?? MAX_BATCHES);
  const now = engine.config.clock.now();
  const { registry } = engine.config;
  const d = store.dialect;
  const rem = registry.get('reminder');
  const tasks = registry.get('task');

  /**
   * Run `step` in one transaction with a write context per workspace whose
   * writes are the cron actor's; the events are written before it commits.
   * False when another runner holds the job.
   */
  async function batch(step: (trx: Kysely<any>, ctxOf: (teamId: string) => Promise<WriteContext>) => Promise<number>): Promise<number | false> {
    return store.transaction(async (trx) => {
      if (d.tryLock && !(await d.tryLock(trx, 'reminders-job'))) return false;
      const teams = new Map<string, { ctx: WriteContext; events: PendingEvent[]; principal: Principal }>();
      const ctxOf = async (teamId: string) => {
        let t = teams.get(teamId);
        if (!t) {
          const principal = { ...system, teamId };
          const events: PendingEvent[] = [];
          const actor = {
            id: await ensureServiceActor(trx, d, registry.get('actor').table, { id: remindersActorId(teamId), teamId, type: 'cron', displayName: REMINDERS_ACTOR_NAME, now }),
            type: 'cron' as const,
          };
          const ctx = engine.writeContext(principal, trx, events, actor);
          t = { ctx, events, principal };
          teams.set(teamId, t);
        }
        return t.ctx;
      };
      const n = await step(trx, ctxOf);
      for (const t of teams.values()) await engine.flushEvents(trx, t.principal, t.events, now);
      return n;
    });
  }

  /** Run `step` batch after batch until it handles fewer than a batch, at most `maxBatches` times; false when another runner holds the job. */
  async function steps(step: Parameters<typeof batch>[0]): Promise<boolean> {
    for (let i = 0; ; i++) {
      if (i === maxBatches) {
        out.more = true;
        return true;
      }
      const n = await batch(step);
      if (n === false) {
        out.skipped = true;
        return false;
      }
      if (n < size) return true;
    }
  }

  async function remove(ctx: WriteContext, rec: Rec): Promise<void> {
    await announce(ctx, rem, rec, 'removed');
    await engine.destroy(ctx, rem, rec);
    out.removed++;
  }

  // 1. Reminders that no longer hold; then marker rows of tasks deleted since.
  const removedAll = await steps(async (trx, ctxOf) => {
    const rows = await staleReminders(trx, d, rem, tasks, size);
    const repo = new Repo(trx, d);
    for (const row of rows) await remove(await ctxOf(row.team_id as string), repo.decode(rem, row));
    if (rows.length < size) await dropOrphanOverdueChecks(trx, tasks, size);
    return rows.length;
  });
  if (!removedAll) return out;

  // 2. Tasks past their dueAt, not completed, without an overdue reminder for that dueAt nor a check mark (visited once a run, in id order).
  let after = '';
  const createdAll = await steps(async (trx, ctxOf) => {
    const rows = await tasksNeedingOverdue(trx, d, rem, tasks, now, after, size);
    if (rows.length === 0) return 0;
    after = rows[rows.length - 1]!.id as string;
    const repo = new Repo(trx, d);
    // Re-read each task under its row lock: a delete, completion or dueAt change that committed since the scan is seen, one still running is waited for.
    const byTeam = new Map<string, Rec[]>();
    for (const r of rows) byTeam.set(r.team_id as string, [...(byTeam.get(r.team_id as string) ?? []), repo.decode(tasks, r)]);
    const held: Array<{ task: Rec; teamId: string }> = [];
    for (const [teamId, list] of byTeam) {
      const locked = new Map((await repo.getMany(tasks, teamId, list.map((t) => t.id), undefined, { lock: 'update' })).map((t) => [t.id, t]));
      for (const t of list) {
        const cur = locked.get(t.id);
        if (cur && cur.dueAt === t.dueAt && typeof cur.dueAt === 'number' && cur.dueAt <= now && cur.completed !== true && cur.archived !== true) held.push({ task: cur, teamId });
      }
    }
    const pairs = await overdueRecipients(trx, d, tasks, held.map((x) => x.task.id));
    const unchecked: Array<{ taskId: string; teamId: string; dueAt: number }> = [];
    for (const { task, teamId } of held) {
      const who = pairs.filter((x) => x.taskId === task.id);
      if (who.length === 0) {
        unchecked.push({ taskId: task.id, teamId, dueAt: task.dueAt as number });
        continue;
      }
      const ctx = await ctxOf(teamId);
      for (const { memberId } of who) {
        await insertRecord(ctx, 'reminder', {
          date: task.dueAt, taskId: task.id, type: 'overdue', createdById: memberId, projectId: task.projectId, firedAt: null, personal: true,
        });
        out.created++;
      }
    }
    await markOverdueChecked(trx, d, unchecked);
    return rows.length;
  });
  if (!createdAll) return out;

  // 3. Reminders that came due: each fires once, if its creator can still be told.
  const told = new Map<string, boolean>();
  await steps(async (trx, ctxOf) => {
    const rows = await dueReminders(trx, d, rem, now, size);
    for (const row of rows) {
      const ctx = await ctxOf(row.team_id as string);
      // Under the row lock a PATCH of date also takes: a reminder re-armed meanwhile is left for its new date.
      const rec = await ctx.repo.get(rem, ctx.teamId, row.id as string, { lock: true });
      if (!rec || rec.firedAt !== null || (rec.date as number) > now) continue;
      const key = `${rec.createdById}:${rec.projectId}`;
      let ok = told.get(key);
      if (ok === undefined) told.set(key, (ok = await canBeTold(engine, ctx, rec.createdById as string, rec.projectId as string | null)));
      if (!ok) {
        await remove(ctx, rec);
        continue;
      }
      const fired = await stampChange(ctx, rem, rec, { firedAt: now });
      await announce(ctx, rem, fired, 'updated');
      out.fired++;
    }
    return rows.length;
  });
  return out;
}

/**
 * May this member still be told about a reminder of this project: an active
 * member of the workspace who can open the project (trashed ones count, as
 * for any read of their rows)?
 */
async function canBeTold(engine: Engine, ctx: WriteContext, memberId: string, projectId: string | null): Promise<boolean> {
  const { registry } = engine.config;
  const m = await ctx.repo.get(registry.get('member'), ctx.teamId, memberId);
  if (!m || m.active !== true) return false;
  if (typeof projectId !== 'string') return true;
  const role = await ctx.repo.get(registry.get('role'), ctx.teamId, m.roleId as string);
  const principal: Principal = {
    teamId: ctx.teamId, memberId: m.id, userId: m.userId as string, memberName: m.name as string, role: m.role as string, roleId: m.roleId as string,
    permissions: new Set(role ? effectivePermissions(registry, role) : []), tokenId: '', scopes: new Set(), actorId: null,
  };
  try {
    await engine.readContext(principal, ctx.db).access.assertProject(projectId);
    return true;
  } catch (err) {
    if (err instanceof ProblemError) return false;
    throw err;
  }
}
