import type { Engine } from '../services/engine';
import type { PendingEvent, Principal, WriteContext } from '../services/context';
import type { Rec } from '../resources/define-resource';
import type { SqlStore } from '../sql/dialect';
import { Repo } from '../sql/repo';
import { ProblemError } from '../errors/problem';
import { announce } from '../services/records';
import { nextRunOf, type ScheduleRec } from '../resources/recurring-schedule';
import { workspaceTimezone } from '../sql/queries/workspaces';
import { dueRecurringRules } from '../sql/queries/recurring';

/*
 * The recurring-task job (issue 13; decisions in docs/not-shown.md
 * "Recurring rules"). Each due rule (active, nextRunAt ≤ now, its project
 * not in the trash) fires once per run, in its own transaction:
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
 * Both commit together or not at all. An occurrence whose task the engine
 * refuses (a ProblemError below 500: the rule's template is invalid, e.g.
 * the project has no active status) is still claimed, without a task, so one
 * bad rule never fires again and again. Any other failure (a dropped
 * connection, a lock timeout, a bug) claims nothing: the rule stays due for
 * the next run, the error is reported (`onError`) and counted in `errors`,
 * and the run goes on with the other rules. Occurrences missed while no job
 * ran are not replayed one by one: the earliest missed one creates one task
 * and nextRunAt moves past now (bounded work).
 */

export interface RecurringJobResult {
  /** Due rules this run looked at. */
  due: number;
  /** Tasks created. */
  created: number;
  /** Occurrences claimed without a task (the engine refused their task). */
  failed: number;
  /** Due rules another runner (or a change to the rule) claimed first. */
  skipped: number;
  /** Due rules left due after an unexpected error (reported to `onError`); the next run tries them again. */
  errors: number;
}

/** Due rules read per query; a run reads batch after batch. */
export const RECURRING_BATCH = 200;
/** Default and largest `limit`: the most due rules one run looks at. */
export const RECURRING_RUN_MAX = 1000;
/** A run starts no new batch once this much time (by the injected clock) has passed since it began, so runs scheduled every minute do not pile up. */
export const RECURRING_RUN_MS = 50_000;

const noView = { expand: { children: new Map() }, fields: new Map() };

/** `limit` as given to `api.jobs.recurring`: an integer 1-1000, else clamped (non-numbers take the default). */
export function recurringLimit(limit: unknown): number {
  if (typeof limit !== 'number' || Number.isNaN(limit)) return RECURRING_RUN_MAX;
  return Math.min(RECURRING_RUN_MAX, Math.max(1, Math.floor(limit)));
}

export async function runRecurringJob(
  engine: Engine, store: SqlStore, system: Principal, limit?: number, onError: (err: unknown) => void = () => undefined,
): Promise<RecurringJobResult> {
  const out: RecurringJobResult = { due: 0, created: 0, failed: 0, skipped: 0, errors: 0 };
  const { registry, clock } = engine.config;
  const rules = registry.get('recurringRule');
  const projects = registry.get('project');
  const max = recurringLimit(limit);
  const now = clock.now();
  const started = clock.now();
  let after: { nextRunAt: number; id: string } | undefined;
  while (out.due < max && clock.now() - started < RECURRING_RUN_MS) {
    const batch = await dueRecurringRules(store.db, store.dialect, {
      table: rules.table, activeColumn: rules.columnOf.active!, nextRunColumn: rules.columnOf.nextRunAt!, projectColumn: rules.columnOf.projectId!,
      projectsTable: projects.table, now, limit: Math.min(RECURRING_BATCH, max - out.due), ...(after ? { after } : {}),
    });
    out.due += batch.length;
    for (const { id, teamId } of batch) await fireOne(engine, store, system, teamId, id, now, out, onError);
    if (batch.length < RECURRING_BATCH) break;
    const last = batch[batch.length - 1]!;
    after = { nextRunAt: last.nextRunAt, id: last.id };
  }
  return out;
}

/** One due rule, counted in `out`; nothing it throws stops the run. */
async function fireOne(
  engine: Engine, store: SqlStore, system: Principal, teamId: string, id: string, now: number, out: RecurringJobResult, onError: (err: unknown) => void,
): Promise<void> {
  try {
    out[await fire(engine, store, system, teamId, id, now, true)]++;
    return;
  } catch (err) {
    if (!refused(err)) {
      out.errors++;
      report(onError, err);
      return;
    }
  }
  // The engine refused the task: the occurrence is claimed without one (a separate transaction; the failed one rolled back).
  try {
    const outcome = await fire(engine, store, system, teamId, id, now, false);
    if (outcome === 'created') out.failed++;
    else out.skipped++;
  } catch (err) {
    out.errors++;
    report(onError, err);
  }
}

/** The task itself is invalid (a 4xx the engine answers), as opposed to a failure of the system. */
function refused(err: unknown): boolean {
  return err instanceof ProblemError && err.status < 500;
}

function report(onError: (err: unknown) => void, err: unknown): void {
  try {
    onError(err);
  } catch {
    // A reporter that throws must not stop the run.
  }
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
    const rule = await new Repo(trx, store.dialect).get(rules, teamId, id, { lock: true });
    if (!rule || rule.active !== true || rule.nextRunAt === null || (rule.nextRunAt as number) > now) return 'skipped';
    const ctx = engine.writeContext(principal, trx, events, { id: rule.actorId as string, type: 'recurringTask' });
    const occurrence = rule.nextRunAt as number;
    const tz = await workspaceTimezone(ctx.repo, teamId);
    const fired = { ...rule, occurrences: (rule.occurrences as number) + 1, lastRunAt: occurrence } as Rec;
    const nextRunAt = nextRunOf(fired as unknown as ScheduleRec, tz, now + 1);
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
