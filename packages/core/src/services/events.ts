/**
 * Events of the standard operations: lifecycle and membership events collected
 * in a write context, and their writing to the outbox (with the webhook jobs)
 * in the same transaction.
 */
import type { Kysely } from 'kysely';
import { iso } from '../clock/index';
import type { Rec, Resource } from '../resources/define-resource';
import { insertOutbox, insertOutboxBehind } from '../sql/queries/outbox';
import { storedAudience } from '../sql/queries/activity';
import type { LiveWebhook, WebhooksAhead } from '../sql/queries/webhooks';
import type { SqlStore } from '../sql/dialect';
import { audienceOf, eventPayload } from './records';
import type { PendingEvent, Principal, WriteContext } from './context';
import type { EngineConfig } from './config';
import { enqueueWebhookJobs } from '../webhooks/enqueue';

/** A lifecycle event (`audience`: who may see the record, computed from it unless given). */
export async function lifecycleEvent(ctx: WriteContext, res: Resource, action: string, rec: Rec, payload: Record<string, unknown>, audience?: readonly string[]) {
  if (!res.events) return;
  const who = audience ?? (await audienceOf(ctx, res, rec));
  ctx.emit({
    type: `${res.name}.${action}`,
    aggregateType: res.name,
    aggregateId: rec.id,
    projectId: res.projectIdOf(rec),
    payload: { [res.name]: eventPayload(res, payload) },
    ...(who ? { audience: who } : {}),
  });
}

/**
 * The membership events of a relation change (`{resource}.{relation}.added` /
 * `.removed`, one per id, payload `{parentId, relatedId, relation}`), as the
 * standard operations emit them; for hooks and operations that change a set
 * themselves (a handoff's task assignees, a project operation's roster).
 */
export async function membershipEvents(ctx: WriteContext, res: Resource, rec: Rec, relation: string, ids: readonly string[], change: 'added' | 'removed'): Promise<void> {
  if (!res.events || ids.length === 0) return;
  const who = await audienceOf(ctx, res, rec);
  for (const relatedId of ids) {
    ctx.emit({
      type: `${res.name}.${relation}.${change}`,
      aggregateType: res.name,
      aggregateId: rec.id,
      projectId: res.projectIdOf(rec),
      payload: { parentId: rec.id, relatedId, relation },
      ...(who ? { audience: who } : {}),
    });
  }
}

/**
 * Write collected events to the outbox in the same transaction (the delivery envelope of spec "Delivery request").
 * With the team's webhooks read `ahead` (liveWebhooksAhead), the outbox rows and their delivery jobs are held to
 * leave with the transaction's next statement, its commit at the latest (on Postgres: no round trip of their own).
 */
export async function flushEvents(store: SqlStore, config: EngineConfig, trx: Kysely<any>, principal: Principal, events: PendingEvent[], now: number, ahead?: WebhooksAhead): Promise<void> {
  if (events.length === 0) return;
  const d = store.dialect;
  const rows = events.map((e) => {
    const eventId = config.ids.uuid();
    const envelope = {
      eventId,
      type: e.type,
      aggregateType: e.aggregateType,
      aggregateId: e.aggregateId,
      teamId: principal.teamId,
      projectId: e.projectId,
      triggeredBy: principal.identity === 'agent'
        ? { source: 'agent', agentId: principal.memberId }
        : principal.memberId && principal.identity !== 'automation'
          ? { source: 'human', userId: principal.userId, teamMemberId: principal.memberId }
          : { source: 'system' },
      timestamp: iso(now),
      payload: e.payload,
    };
    return {
      id: eventId, team_id: principal.teamId, type: e.type, aggregate_type: e.aggregateType, aggregate_id: e.aggregateId,
      project_id: e.projectId, body: d.encode('json', envelope), created_at: d.encode('timestamp', now),
      // What the activity feed scopes by (routes/activity.ts): who may see the event, and who wrote it.
      audience: storedAudience(config.registry.byName.get(e.aggregateType), e.payload[e.aggregateType] as Record<string, unknown> | undefined, e.audience),
      member_id: principal.memberId || null,
    };
  });
  const jobs = rows.map((r, i) => ({ id: r.id, type: r.type, audience: events[i]!.audience }));
  // A write to a webhook reads the webhooks again, after itself: a webhook gets the event of its own creation.
  if (ahead && !events.some((e) => e.aggregateType === 'webhook')) {
    const hooks = await ahead.read();
    for (let i = 0; i < rows.length; i += 100) {
      const batch = rows.slice(i, i + 100);
      await insertOutboxBehind(trx, d, batch, batch.flatMap((r) => Object.values(r)));
    }
    await enqueueWebhookJobs(trx, d, principal.teamId, jobs, now, hooks, { behind: true });
    return;
  }
  let hooks: LiveWebhook[] | undefined;
  for (let i = 0; i < rows.length; i += 100) {
    const batch = rows.slice(i, i + 100);
    const params = batch.flatMap((r) => Object.values(r));
    // The last batch also reads the team's live webhooks for the job queue, in the same statement (where the dialect can).
    const last = i + 100 >= rows.length;
    const found = await insertOutbox(trx, d, batch, params, last ? principal.teamId : undefined);
    if (found) hooks = found;
  }
  await enqueueWebhookJobs(trx, d, principal.teamId, jobs, now, hooks);
}
