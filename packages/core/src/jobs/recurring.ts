import type { Engine } from '../services/engine';
import type { PendingEvent, Principal, WriteContext } from '../services/context';
import type { Rec } from '../resources/define-resource';
import type { SqlStore } from '../sql/dialect';
import { announce } from '../services/records';
import { nextRunOf, type Schedule } from '../resources/recurring-rule.resource';
import { workspaceTimezone } from '../sql/queries/workspaces';
import { dueRecurringRules } from '../sql/queries/recurring';

/*
 * The recurring-task job (issue 13; decisions in docs/not-shown.md
 * "Recurring rules"). Each due rule (active, nextRunAt ≤ now) fires once per
 * run, in its own transaction:
 *
 * 1. the rule row is read under a row lock (Postgres) and skipped unless
 *    still due;
 * 2. the task is created through the engine (task rules, defaults, niceId,
 *    events apply) with the rule's template and `recurringRuleId`, written by
 *    the rule's own `recurringTask` actor; events carry triggeredBy system;
 * 3. the occurrence is claimed: the rule is updated only if it still carries
 *    the updatedAt it was read with (a guarded UPDATE), advancing nextRunAt
 *    to the first occurrence after now, `lastRunAt` to the fired occurrence
 *    and `occurrences` by one. A runner that loses (another process, or the
 *    same job run twice) rolls back, task included, and counts `skipped`.
 *
 * Both commit together or not at all. An occurrence that cannot create its
 * task (the project is in the trash, …) is still claimed, without a task,
 * so one bad rule never blocks the queue or fires again. Occurrences missed
 * while no job ran are not replayed one by one: the earliest missed one
 * creates one task and nextRunAt moves past now (bounded work).
 */

export interface RecurringJobResult {
  /** Due rules this run looked at. */
  due: number;
  /** Tasks created. */
  created: number;
  /** Occurrences claimed without a task (their task could not be created). */
  failed: number;
  /** Due rules another runner (or a change to the rule) claimed first. */
  skipped: number;
}

/** Most due rules one run fires (schedule the job every minute; a backlog drains over runs). */
export const RECURRING_BATCH = 200;

const noView = { expand: { children: new Map() }, fields: new Map() };

export async function runRecurringJob(engine: Engine, store: SqlStore, system: Principal, limit = RECURRING_BATCH): Promise<RecurringJobResult> {
  const out: RecurringJobResult = { due: 0, created: 0, failed: 0, skipped: 0 };
  const { registry, clock } = engine.config;
  const rules = registry.get('recurringRule');
  const now = clock.now();
  const due = await dueRecurringRules(store.db, store.dialect, { table: rules.table, activeColumn: rules.columnOf.active!, nextRunColumn: rules.columnOf.nextRunAt!, now, limit });
  out.due = due.length;
  for (const { id, teamId } of due) {
    let outcome: 'created' | 'skipped';
    try {
      outcome = await fire(engine, store, system, teamId, id, now, true);
    } catch {
      // The task could not be made: the occurrence is claimed without one (a separate transaction; the failed one rolled back).
      outcome = await fire(engine, store, system, teamId, id, now, false);
      if (outcome === 'created') {
        out.failed++;
        continue;
      }
    }
    out[outcome]++;
  }
  return out;
}

/** Claim one due occurrence of a rule and (when `withTask`) create its task, in one transaction. */
async function fire(engine: Engine, store: SqlStore, system: Principal, teamId: string, id: string, now: number, withTask: boolean): Promise<'created' | 'skipped'> {
  try {
    return await claimAndCreate(engine, store, system, teamId, id, now, withTask);
  } catch (err) {
    if (err instanceof Claimed) return 'skipped';
    throw err;
  }
}

/** Another runner claimed the occurrence first (or the rule changed while this one ran). */
class Claimed extends Error {}

async function claimAndCreate(engine: Engine, store: SqlStore, system: Principal, teamId: string, id: string, now: number, withTask: boolean): Promise<'created' | 'skipped'> {
  const { registry } = engine.config;
  const rules = registry.get('recurringRule');
  const tasks = registry.get('task');
  return store.transaction(async (trx): Promise<'created' | 'skipped'> => {
    // The service sees every project of the workspace; no member is behind the write.
    const principal: Principal = { ...system, teamId, permissions: new Set(['viewAllProjects']) };
    const events: PendingEvent[] = [];
    const base = engine.writeContext(principal, trx, events);
    const rule = await base.repo.get(rules, teamId, id, { lock: true });
    if (!rule || rule.active !== true || rule.nextRunAt === null || (rule.nextRunAt as number) > now) return 'skipped';
    const actor = { id: rule.actorId as string, type: 'recurringTask' as const };
    const ctx: WriteContext = {
      ...base,
      actor: async () => actor,
      touch: async (previous) => ({ updatedAt: base.stamp(previous), updatedByActorId: actor.id, updatedByActorType: actor.type }),
    };
    const occurrence = rule.nextRunAt as number;
    const tz = await workspaceTimezone(ctx.repo, teamId);
    const fired = { ...rule, occurrences: (rule.occurrences as number) + 1, lastRunAt: occurrence } as Rec;
    const nextRunAt = nextRunOf(fired as unknown as Parameters<typeof nextRunOf>[0] & Schedule, tz, now + 1);
    // The task first, so it carries the run's instant; then the rule is stamped.
    if (withTask) await engine.create(ctx, tasks, await taskBody(ctx, rule), noView);
    const values = { occurrences: fired.occurrences, lastRunAt: occurrence, nextRunAt, ...(await ctx.touch(rule.updatedAt)) };
    // The claim: only the runner that still sees the row as it read it advances it; another one's work (the task above) rolls back.
    if (!(await ctx.repo.update(rules, teamId, id, values, rule.updatedAt))) throw new Claimed();
    await announce(ctx, rules, { ...rule, ...values } as Rec, 'updated');
    await engine.flushEvents(trx, principal, events, ctx.now);
    return 'created';
  });
}

/** The task an occurrence creates: the rule's template; a list or status that has since gone (or left the project) is left out. */
async function taskBody(ctx: WriteContext, rule: Rec): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = { name: rule.name, projectId: rule.projectId, recurringRuleId: rule.id };
  if (rule.description !== null) body.description = rule.description;
  for (const [field, resName] of [['listId', 'list'], ['statusId', 'status']] as const) {
    const ref = rule[field];
    if (typeof ref !== 'string') continue;
    const target = await ctx.repo.get(ctx.registry.get(resName), ctx.teamId, ref);
    if (target && target.projectId === rule.projectId) body[field] = ref;
  }
  return body;
}
