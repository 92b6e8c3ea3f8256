import type { Kysely, QueryCreator } from 'kysely';
import type { DialectSupport } from '../dialect';
import { compileCached, holdOrRun, holdStatement, runCached, sendHeld } from '../statement-cache';

/** Job rows per insert statement (12 parameters each). */
const JOBS_CHUNK = 80;

/** A webhook row as the delivery queue needs it. */
export interface LiveWebhook {
  id: string;
  events: unknown;
  /** The member who registered it: private records reach it only when that member may see them. */
  created_by_id: string | null;
}

/** The team's active, live webhooks, as a query to run (`qc` may carry a CTE: the outbox insert on Postgres). */
export function selectLiveWebhooks(qc: QueryCreator<any>, d: DialectSupport, teamId: string) {
  return qc.selectFrom('webhooks').select(['id', 'events', 'created_by_id'])
    .where('team_id', '=', teamId).where('active', '=', d.encode('boolean', true) as any).where('purge_at', 'is', null);
}

/** The parameters `selectLiveWebhooks` binds, in order. */
export function liveWebhooksParams(d: DialectSupport, teamId: string): unknown[] {
  return [teamId, d.encode('boolean', true)];
}

/** The team's active, live webhooks (id and raw `events` column). */
export async function liveWebhooks(db: Kysely<any>, d: DialectSupport, teamId: string): Promise<LiveWebhook[]> {
  // Every write that records events runs this: compiled once.
  return (await runCached<LiveWebhook>(db, d.name, 'webhooks:live', liveWebhooksParams(d, teamId), () => selectLiveWebhooks(db, d, teamId))).rows;
}

/** The team's live webhooks, read ahead (see {@link liveWebhooksAhead}). */
export interface WebhooksAhead {
  /** The webhooks: answered with an earlier statement of the transaction, or sent now if none went since. */
  read(): Promise<LiveWebhook[]>;
}

/**
 * The team's live webhooks read ahead, at the start of a transaction that
 * will record events: held to leave with its first statement (no round trip
 * of its own), so that at the end its events and their delivery jobs need
 * nothing back and can leave with the commit. Undefined where statements
 * cannot be held (SQLite, `prepare: false`): the webhooks are then read
 * with the events.
 */
export async function liveWebhooksAhead(trx: Kysely<any>, d: DialectSupport, teamId: string): Promise<WebhooksAhead | undefined> {
  if (!d.capabilities.pipeline) return undefined;
  const held = await holdStatement(trx, compileCached(d.name, 'webhooks:live', liveWebhooksParams(d, teamId), () => selectLiveWebhooks(trx, d, teamId)));
  if (!held) return undefined;
  let answered = false;
  const hooks = held.answer.then((r) => r.rows as LiveWebhook[]);
  hooks.then(() => (answered = true), () => (answered = true));
  return {
    async read() {
      if (!answered) await sendHeld(trx);
      return hooks;
    },
  };
}

/**
 * Queue delivery jobs (rows in column form), 80 per statement; a job whose id is already queued is left as it is.
 * `behind`: held to leave with the transaction's next statement where the connection can hold it (holdStatement).
 */
export async function insertWebhookJobs(trx: Kysely<any>, rows: readonly Record<string, unknown>[], opts: { behind?: boolean } = {}): Promise<void> {
  for (let i = 0; i < rows.length; i += JOBS_CHUNK) {
    const q = trx.insertInto('webhook_jobs').values(rows.slice(i, i + JOBS_CHUNK)).onConflict((oc) => oc.column('id').doNothing()).compile();
    await (opts.behind ? holdOrRun(trx, q) : trx.executeQuery(q));
  }
}
