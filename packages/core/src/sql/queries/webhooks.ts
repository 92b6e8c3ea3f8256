import type { Kysely, QueryCreator } from 'kysely';
import type { DialectSupport } from '../dialect';
import { runCached } from '../statement-cache';

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

/** Queue delivery jobs (rows in column form), 80 per statement; a job whose id is already queued is left as it is. */
export async function insertWebhookJobs(trx: Kysely<any>, rows: readonly Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += JOBS_CHUNK) {
    await trx.insertInto('webhook_jobs').values(rows.slice(i, i + JOBS_CHUNK)).onConflict((oc) => oc.column('id').doNothing()).execute();
  }
}
