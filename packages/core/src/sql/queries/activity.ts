import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { escapeLike, type Repo } from '../repo';

/**
 * The activity feed's reads of the outbox (routes/activity.ts): one keyset
 * page of a workspace's events, newest first, scoped to what the caller may
 * see, in one bounded statement.
 */

/** An event's audience as the outbox stores it: `,id1,id2,` (ids never hold a comma); `,` for nobody. */
export function encodeAudience(ids: readonly string[]): string {
  return `,${ids.join(',')},`;
}

export interface ActivityScope {
  teamId: string;
  /** The caller: events with an audience are shown only when it names them. */
  memberId: string;
  /** Aggregate types the caller may read; nothing else is shown. */
  readableTypes: readonly string[];
  /** Of those, personal resources: shown only when the caller wrote the event. */
  ownTypes: readonly string[];
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

function where(repo: Repo, s: ActivityScope, f: ActivityFilters, eb: ExpressionBuilder<any, any>): Expression<SqlBool> {
  const d = repo.dialect;
  const parts: Expression<SqlBool>[] = [eb('team_id', '=', s.teamId), eb('aggregate_type', 'in', [...s.readableTypes])];
  parts.push(eb.or([
    eb('audience', 'is', null),
    sql<SqlBool>`${eb.ref('audience')} like ${`%,${escapeLike(s.memberId)},%`} escape '\\'`,
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
  for (const [op, v] of Object.entries(f.createdAt ?? {})) {
    parts.push(eb('created_at', OPS[op as keyof typeof OPS], d.encode('timestamp', v)));
  }
  return eb.and(parts);
}

export interface ActivityRow {
  id: string;
  createdAt: number;
  /** The stored envelope (spec "Delivery request" body). */
  envelope: Record<string, unknown>;
}

/** At most `take` events, newest first (created_at, then id, descending), strictly after the boundary `after` = [createdAt ms, id]. */
export async function activityPage(
  repo: Repo, s: ActivityScope, f: ActivityFilters, after: readonly [number, string] | undefined, take: number,
): Promise<ActivityRow[]> {
  const d = repo.dialect;
  let q = repo.db.selectFrom('outbox').select(['id', 'created_at', 'body']).where((eb) => where(repo, s, f, eb));
  if (after) {
    const t = d.encode('timestamp', after[0]);
    q = q.where((eb) => eb.or([eb('created_at', '<', t), eb.and([eb('created_at', '=', t), eb('id', '<', after[1])])]));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(take).execute();
  return rows.map((r) => ({
    id: r.id as string,
    createdAt: d.decode('timestamp', r.created_at) as number,
    envelope: d.decode('json', r.body) as Record<string, unknown>,
  }));
}

/** How many events the feed holds for these filters (the page's `total`). */
export async function countActivity(repo: Repo, s: ActivityScope, f: ActivityFilters): Promise<number> {
  const row = await repo.db.selectFrom('outbox').select((eb) => eb.fn.countAll().as('n')).where((eb) => where(repo, s, f, eb)).executeTakeFirstOrThrow();
  return Number(row.n);
}
