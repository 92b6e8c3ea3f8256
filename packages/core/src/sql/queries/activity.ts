import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { escapeLike, type Repo } from '../repo';
import { limitOf } from '../dialect';

/**
 * The activity feed's reads of the outbox (routes/activity.ts): one keyset
 * page of a workspace's events, newest first, scoped to what the caller may
 * see, each statement bounded by a scan budget (docs/not-shown.md "Activity
 * feed"); and the outbox's stored audiences, kept current.
 */

/**
 * Most outbox rows one page examines: the workspace's newest events past the
 * cursor (and within the createdAt range), read through the
 * (team_id, created_at, id) index. A page that finds too few events the
 * caller may see among them ends short, with a cursor past the last one examined.
 */
export const ACTIVITY_SCAN_BUDGET = 5_000;

/** Most outbox rows `includeTotal` examines; past them `total` is a lower bound (`totalCapped: true`). */
export const ACTIVITY_COUNT_BUDGET = 10_000;

/** An event's audience as the outbox stores it: `,id1,id2,` (ids never hold a comma); `,` for nobody. */
export function encodeAudience(ids: readonly string[]): string {
  return `,${ids.join(',')},`;
}

/** What of a resource's declaration decides an event's stored audience. */
export interface AudienceRules {
  ownerRead?: { field: string; widenedBy: string };
  privateTo?: unknown;
  membersOnly?: unknown;
}

/**
 * The audience the outbox stores for the feed (the webhook audience is the
 * event's own `audience`; both are the same but here): for a resource read by
 * its owner and widened by a role permission alone (time entries), only the
 * owner, since the feed judges the permission when it reads; otherwise the
 * event's audience (null: whoever may read the resource and open its project).
 * `rec` is the record (or its response form) the event is of.
 */
export function storedAudience(res: AudienceRules | undefined, rec: Record<string, unknown> | undefined, audience: readonly string[] | undefined): string | null {
  const o = res?.ownerRead;
  if (o && !res.privateTo && !res.membersOnly) {
    const owner = rec?.[o.field];
    return encodeAudience(typeof owner === 'string' ? [owner] : []);
  }
  return audience ? encodeAudience(audience) : null;
}

/**
 * A record's past events take its current audience (a dashboard turned
 * private or shared again), in the caller's transaction: one statement over
 * the outbox_aggregate index.
 */
export async function rewriteAudience(repo: Repo, teamId: string, aggregateType: string, aggregateId: string, audience: string | null): Promise<void> {
  await repo.db.updateTable('outbox').set({ audience })
    .where('aggregate_id', '=', aggregateId).where('team_id', '=', teamId).where('aggregate_type', '=', aggregateType)
    .execute();
}

export interface ActivityScope {
  teamId: string;
  /** The caller: events with an audience are shown only when it names them. */
  memberId: string;
  /** Aggregate types the caller may read; nothing else is shown. */
  readableTypes: readonly string[];
  /** Of those, personal resources: shown only when the caller wrote the event. */
  ownTypes: readonly string[];
  /**
   * Of those, owner-read resources whose widening permission the caller's
   * role holds now (time entries with viewTimeReports): shown whatever the
   * stored audience (which names the owner alone).
   */
  widenedTypes: readonly string[];
  /** Projects the caller may open ('all': every one); events of other projects are not shown. */
  projects: readonly string[] | 'all';
}

export interface ActivityFilters {
  type?: readonly string[];
  aggregateType?: readonly string[];
  aggregateId?: readonly string[];
  projectId?: readonly string[];
  /** projectId[null]: true → only workspace-level events; false → only project events. */
  projectNull?: boolean;
  triggeredById?: readonly string[];
  createdAt?: Partial<Record<'gt' | 'gte' | 'lt' | 'lte', number>>;
}

const OPS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/**
 * The columns the feed judges rows by. Not `body`: a window holds up to the
 * scan budget of rows (and is materialised), so the envelopes are read by id
 * for the rows a page shows alone, and a count never reads them.
 */
const COLUMNS = ['id', 'created_at', 'type', 'aggregate_type', 'aggregate_id', 'project_id', 'audience', 'member_id'] as const;

/** Who may see a row, and the filters the index does not serve. */
function visible(s: ActivityScope, f: ActivityFilters, eb: ExpressionBuilder<any, any>): Expression<SqlBool> {
  const parts: Expression<SqlBool>[] = [eb('aggregate_type', 'in', [...s.readableTypes])];
  parts.push(eb.or([
    eb('audience', 'is', null),
    sql<SqlBool>`${eb.ref('audience')} like ${`%,${escapeLike(s.memberId)},%`} escape '\\'`,
    ...(s.widenedTypes.length ? [eb('aggregate_type', 'in', [...s.widenedTypes])] : []),
  ]));
  if (s.ownTypes.length) parts.push(eb.or([eb('aggregate_type', 'not in', [...s.ownTypes]), eb('member_id', '=', s.memberId)]));
  if (s.projects !== 'all') {
    parts.push(s.projects.length ? eb.or([eb('project_id', 'is', null), eb('project_id', 'in', [...s.projects])]) : eb('project_id', 'is', null));
  }
  if (f.type) parts.push(eb('type', 'in', [...f.type]));
  if (f.aggregateType) parts.push(eb('aggregate_type', 'in', [...f.aggregateType]));
  if (f.aggregateId) parts.push(eb('aggregate_id', 'in', [...f.aggregateId]));
  if (f.projectId) parts.push(eb('project_id', 'in', [...f.projectId]));
  if (f.projectNull !== undefined) parts.push(eb('project_id', f.projectNull ? 'is' : 'is not', null));
  if (f.triggeredById) parts.push(eb('member_id', 'in', [...f.triggeredById]));
  return eb.and(parts);
}

/**
 * The rows a statement examines: at most `budget` of the workspace's events,
 * newest first, strictly after `after` and within the createdAt range (all
 * served by the (team_id, created_at, id) index).
 */
function examined(repo: Repo, teamId: string, f: ActivityFilters, after: readonly [number, string] | undefined, budget: number) {
  const d = repo.dialect;
  let q = repo.db.selectFrom('outbox').select([...COLUMNS]).where('team_id', '=', teamId);
  for (const [op, v] of Object.entries(f.createdAt ?? {})) q = q.where('created_at', OPS[op as keyof typeof OPS], d.encode('timestamp', v));
  if (after) {
    const t = d.encode('timestamp', after[0]);
    q = q.where((eb) => eb.or([eb('created_at', '<', t), eb.and([eb('created_at', '=', t), eb('id', '<', after[1])])]));
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limitOf(d, budget));
}

export interface ActivityRow {
  id: string;
  createdAt: number;
  /** The stored envelope (spec "Delivery request" body). */
  envelope: Record<string, unknown>;
}

export interface ActivityPage {
  /** At most `take` events the caller may see, newest first. */
  rows: ActivityRow[];
  /** The last row examined when the budget ran out (more events may follow it); undefined when the feed ends within it. */
  budgetEnd?: { id: string; createdAt: number };
}

/**
 * At most `take` events, newest first (created_at, then id, descending),
 * strictly after the boundary `after` = [createdAt ms, id], found among at
 * most `budget` rows. One statement: the examined window (a CTE, without the
 * envelopes), the rows of it the caller may see (at most `take`, joined to
 * the outbox by id for their envelopes), and the window's last row if the
 * window is full.
 */
export async function activityPage(
  repo: Repo, s: ActivityScope, f: ActivityFilters, after: readonly [number, string] | undefined, take: number, budget = ACTIVITY_SCAN_BUDGET,
): Promise<ActivityPage> {
  const d = repo.dialect;
  const db = repo.db.with('w', () => examined(repo, s.teamId, f, after, budget));
  const shown = (db as any).selectFrom((qb: any) => qb.selectFrom('w')
    .select(['id', 'created_at', sql<number>`1`.as('shown')])
    .where((eb: ExpressionBuilder<any, any>) => visible(s, f, eb))
    .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limitOf(d, take)).as('a'))
    .innerJoin('outbox as o', 'o.id', 'a.id')
    .select(['a.id', 'a.created_at', 'o.body', 'a.shown']);
  const end = repo.db.selectFrom((qb: any) => qb.selectFrom('w')
    .select(['id', 'created_at', sql<null>`cast(null as ${sql.raw(d.ddl.json)})`.as('body'), sql<number>`0`.as('shown')])
    .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limitOf(d, 1)).offset(budget - 1).as('b')).selectAll();
  const found = await shown.unionAll(end as any).execute();
  const out: ActivityPage = { rows: [] };
  for (const r of found as any[]) {
    const createdAt = d.decode('timestamp', r.created_at) as number;
    if (Number(r.shown) === 1) out.rows.push({ id: r.id as string, createdAt, envelope: d.decode('json', r.body) as Record<string, unknown> });
    else out.budgetEnd = { id: r.id as string, createdAt };
  }
  out.rows.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return out;
}

/**
 * How many events the feed holds for these filters (the page's `total`),
 * counted among at most `budget` + 1 of the workspace's newest events in the
 * createdAt range: `capped` when there were more (then `n` is a lower bound).
 */
export async function countActivity(repo: Repo, s: ActivityScope, f: ActivityFilters, budget = ACTIVITY_COUNT_BUDGET): Promise<{ n: number; capped: boolean }> {
  const row = await repo.db.with('w', () => examined(repo, s.teamId, f, undefined, budget + 1))
    .selectFrom('w')
    .select((eb: ExpressionBuilder<any, any>) => [
      eb.fn.countAll().as('seen'),
      sql<number>`coalesce(sum(case when ${visible(s, f, eb)} then 1 else 0 end), 0)`.as('n'),
    ])
    .executeTakeFirstOrThrow();
  const seen = Number(row.seen);
  return { n: Number(row.n), capped: seen > budget };
}
