import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Engine } from '../services/engine';
import type { PendingEvent, Principal, WriteContext } from '../services/context';
import type { Rec } from '../resources/define-resource';
import type { SqlStore } from '../sql/dialect';
import { Repo } from '../sql/repo';
import { announce, insertRecord, stampChange } from '../services/records';
import { ensureServiceActor } from '../sql/queries/actors';
import { dueReminders, staleOverdueReminders, tasksNeedingOverdue } from '../sql/queries/reminders';
import { effectivePermissions } from '../auth/roles';
import { ProblemError } from '../errors/problem';

/*
 * The reminders job (spec "Reminder": overdue reminders are created by the
 * service from due dates; a reminder that comes due produces its
 * notification). Every decision: docs/not-shown.md "Reminders". One run:
 *
 * 1. removes overdue reminders that no longer hold: their task is completed,
 *    or its dueAt was cleared or changed (`reminder.removed`);
 * 2. creates an overdue reminder for each task whose dueAt has passed and
 *    that is not completed and has none for that dueAt yet: one per assignee
 *    (the task's creator when it has none) who is an active member able to
 *    open the task's project; `date` is the task's dueAt (`reminder.created`);
 * 3. fires every reminder whose date has come and that has not fired: it
 *    stamps `firedAt` and emits `reminder.updated` once, to the creator's
 *    webhooks only (the reminder is private to them).
 *
 * Writes are attributed to the workspace's `cron` actor ("Reminders") and
 * the events' triggeredBy is the system. Time comes from the injected clock
 * only. Running it twice creates, removes and fires nothing twice; one
 * runner at a time across processes (a second one skips, Postgres).
 */

export interface RemindersJobResult {
  /** Overdue reminders created. */
  created: number;
  /** Overdue reminders removed because their task was completed or its dueAt changed. */
  removed: number;
  /** Reminders that came due and fired (their `reminder.updated` notification). */
  fired: number;
}

/** Rows handled per transaction. */
const BATCH = 200;
export const REMINDERS_ACTOR_NAME = 'Reminders';

/** The id of a workspace's reminders actor: a UUID derived from the workspace, so every process agrees on it. */
export function remindersActorId(teamId: string): string {
  const h = createHash('sha256').update(`pmapi reminders cron actor ${teamId}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export async function runRemindersJob(engine: Engine, store: SqlStore, system: Principal): Promise<RemindersJobResult> {
  const out: RemindersJobResult = { created: 0, removed: 0, fired: 0 };
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
          const base = engine.writeContext(principal, trx, events);
          const actor = {
            id: await ensureServiceActor(trx, d, registry.get('actor').table, { id: remindersActorId(teamId), teamId, type: 'cron', displayName: REMINDERS_ACTOR_NAME, now }),
            type: 'cron' as const,
          };
          const ctx: WriteContext = {
            ...base,
            actor: async () => actor,
            touch: async (previous) => ({ updatedAt: base.stamp(previous), updatedByActorId: actor.id, updatedByActorType: actor.type }),
          };
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

  // 1. Overdue reminders that no longer hold.
  for (;;) {
    const n = await batch(async (trx, ctxOf) => {
      const rows = await staleOverdueReminders(trx, d, rem, tasks, BATCH);
      const repo = new Repo(trx, d);
      for (const row of rows) {
        const rec = repo.decode(rem, row);
        const ctx = await ctxOf(row.team_id as string);
        await announce(ctx, rem, rec, 'removed');
        await engine.destroy(ctx, rem, rec);
      }
      return rows.length;
    });
    if (n === false) return out;
    out.removed += n;
    if (n < BATCH) break;
  }

  // 2. Tasks past their dueAt, not completed, without an overdue reminder for that dueAt (visited once a run, in id order).
  let after = '';
  for (;;) {
    const n = await batch(async (trx, ctxOf) => {
      const rows = await tasksNeedingOverdue(trx, d, rem, tasks, now, after, BATCH);
      const repo = new Repo(trx, d);
      for (const row of rows) {
        const task = repo.decode(tasks, row);
        const ctx = await ctxOf(row.team_id as string);
        for (const memberId of await recipients(engine, ctx, task)) {
          await insertRecord(ctx, 'reminder', {
            date: task.dueAt, taskId: task.id, type: 'overdue', createdById: memberId, projectId: task.projectId, firedAt: null, personal: true,
          });
          out.created++;
        }
        after = task.id;
      }
      return rows.length;
    });
    if (n === false) return out;
    if (n < BATCH) break;
  }

  // 3. Reminders that came due: each fires once.
  for (;;) {
    const n = await batch(async (trx, ctxOf) => {
      const rows = await dueReminders(trx, d, rem, now, BATCH);
      for (const row of rows) {
        const ctx = await ctxOf(row.team_id as string);
        // Under the row lock a PATCH of date also takes: a reminder re-armed meanwhile is left for its new date.
        const rec = await ctx.repo.get(rem, ctx.teamId, row.id as string, { lock: true });
        if (!rec || rec.firedAt !== null || (rec.date as number) > now) continue;
        const fired = await stampChange(ctx, rem, rec, { firedAt: now });
        await announce(ctx, rem, fired, 'updated');
        out.fired++;
      }
      return rows.length;
    });
    if (n === false) return out;
    if (n < BATCH) break;
  }
  return out;
}

/**
 * Who is told that a task is overdue: its assignees, or its creator when it
 * has none; only active members of the workspace who can open the task's
 * project (a reminder is never made for someone who could not read it).
 */
async function recipients(engine: Engine, ctx: WriteContext, task: Rec): Promise<string[]> {
  const { registry } = engine.config;
  const assignees = (await ctx.repo.linksOf('task.assignees', [task.id])).get(task.id) ?? [];
  const wanted = assignees.length ? assignees : typeof task.createdById === 'string' ? [task.createdById] : [];
  if (wanted.length === 0) return [];
  const members = await ctx.repo.getMany(registry.get('member'), ctx.teamId, wanted);
  const out: string[] = [];
  for (const id of wanted) {
    const m = members.find((x) => x.id === id);
    if (!m || m.active !== true) continue;
    const role = await ctx.repo.get(registry.get('role'), ctx.teamId, m.roleId as string);
    const principal: Principal = {
      teamId: ctx.teamId, memberId: m.id, userId: m.userId as string, memberName: m.name as string, role: m.role as string, roleId: m.roleId as string,
      permissions: new Set(role ? effectivePermissions(registry, role) : []), tokenId: '', scopes: new Set(), actorId: null,
    };
    const access = engine.readContext(principal, ctx.db).access;
    if (typeof task.projectId === 'string') {
      try {
        await access.assertProject(task.projectId);
      } catch (err) {
        if (err instanceof ProblemError) continue;
        throw err;
      }
    }
    out.push(m.id);
  }
  return out;
}
