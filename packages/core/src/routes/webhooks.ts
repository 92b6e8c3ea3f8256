import type { CustomRoute } from '../http/routes';
import type { ReadContext, WriteContext } from '../services/context';
import type { OpResult } from '../services/engine';
import type { Rec } from '../resources/define-resource';
import { notFound, ProblemError } from '../errors/problem';
import { iso } from '../clock/index';
import { parsePageQuery, singleParams, unknownParam, type PageSpec } from '../query/page';
import { takePage, v3Page } from '../presenters/v3';
import { announce, stampChange } from '../services/records';
import { presentRecord } from '../services/serialize';
import { newWebhookSecret } from '../resources/webhook.resource';
import { signWebhook } from '../webhooks/sign';
import { webhookRuntime } from '../webhooks/runtime';
import type { WebhookAttempt } from '../webhooks/index';
import { recentDeliveries } from '../sql/queries/deliveries';

/**
 * The webhook endpoints beyond the standard operations (spec "Webhook
 * endpoints"): rotate-secret, test and the delivery log. Another team's
 * webhook, or a trashed one, is 404 on each. Decisions: docs/not-shown.md "Webhooks".
 */

export const DELIVERIES_DEFAULT_LIMIT = 25;
export const DELIVERIES_MAX_LIMIT = 100;
export const DELIVERY_ERROR_MAX = 1024;
export const WEBHOOK_USER_AGENT = 'Service-Webhooks/2.0';

async function findWebhook(ctx: ReadContext, id: string, lock = false): Promise<Rec> {
  const res = ctx.registry.get('webhook');
  const rec = await ctx.repo.get(res, ctx.teamId, id, { lock });
  if (!rec) throw notFound('webhook', id);
  return rec;
}

/** A new secret at once; the old one stops signing with this commit (no overlap). Emits webhook.rotateSecret without the secret. */
async function rotateSecret(ctx: WriteContext, id: string): Promise<OpResult> {
  const res = ctx.registry.get('webhook');
  const current = await findWebhook(ctx, id, true);
  const secret = newWebhookSecret(ctx);
  const after = await stampChange(ctx, res, current, { secret });
  await announce(ctx, res, after, 'rotateSecret');
  const body = await presentRecord(ctx, res, after);
  // An Idempotency-Key replay answers the webhook without the secret (like create, spec rule 8).
  return { status: 200, body: { ...body, secret }, replay: { status: 200, body } };
}

/** Test event name (spec rule 6): the first pattern with each `*` replaced by `test`, else webhook.test. */
export function testEventName(patterns: readonly string[]): string {
  const first = patterns[0];
  return first === undefined ? 'webhook.test' : first.replace(/\*/g, 'test');
}

/**
 * One synthetic signed delivery (spec rule 6): one attempt, not logged, not
 * counted toward auto-disable; answers the attempt's outcome. Sent outside
 * any transaction; the webhook.test operation event is recorded afterwards.
 */
async function testDelivery(ctx: WriteContext, id: string): Promise<OpResult> {
  const hook = await findWebhook(ctx, id);
  const runtime = webhookRuntime(ctx.registry);
  if (!runtime?.sender) {
    throw new ProblemError('service_unavailable', 'No webhook sender is configured for test deliveries', {}, { 'retry-after': '60' });
  }
  const now = ctx.clock.now();
  const eventId = `test-${ctx.ids.uuid()}`;
  const eventType = testEventName((hook.events as string[] | null) ?? []);
  const envelope = {
    eventId,
    type: eventType,
    aggregateType: 'webhook',
    aggregateId: hook.id,
    teamId: ctx.teamId,
    projectId: null,
    triggeredBy: { source: 'system' },
    timestamp: iso(now),
    payload: { _test: true, message: 'This is a test delivery.', timestamp: iso(now) },
  };
  const body = JSON.stringify(envelope);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    'X-Webhook-Id': hook.id,
    'X-Webhook-Event': eventType,
    'X-Webhook-Delivery-Id': `${hook.id}:${eventId}`,
    'X-Webhook-Signature': signWebhook(hook.secret as string, body, Math.floor(now / 1000)),
    'X-Api-Version': hook.apiVersion as string,
  };
  let attempt: WebhookAttempt;
  try {
    attempt = await runtime.sender({ url: hook.url as string, headers, body });
  } catch (e) {
    attempt = { ok: false, status: null, durationMs: 0, error: String((e as Error)?.message ?? e) };
  }
  const outcome = {
    delivered: attempt.ok,
    responseStatus: attempt.status,
    durationMs: attempt.durationMs,
    error: attempt.ok ? null : (attempt.error ?? 'failed').slice(0, DELIVERY_ERROR_MAX),
    eventId,
    eventType,
  };
  await runtime.publish(ctx.principal, [{
    type: 'webhook.test', aggregateType: 'webhook', aggregateId: hook.id, projectId: null, payload: { webhook: outcome },
  }], ctx.clock.now());
  return { status: 200, body: outcome };
}

const DELIVERIES_PAGE: PageSpec = {
  endpoint: 'webhooks/deliveries', maxLimit: DELIVERIES_MAX_LIMIT, defaultLimit: DELIVERIES_DEFAULT_LIMIT, cursor: false, total: false,
};

/** The delivery log, newest first: `{data, limit, hasMore}`, no cursor (spec rule 7, "Limits": 1-100, default 25; larger clamped). */
async function deliveries(ctx: WriteContext, id: string, query: URLSearchParams): Promise<OpResult> {
  // The one pagination parser, configured as the spec has this log: limit only, no cursor, no sort, no total.
  const params = singleParams(query);
  for (const k of params.keys()) if (k !== 'limit') throw unknownParam(k, ['limit'], 'the delivery log');
  const { limit } = parsePageQuery(params, DELIVERIES_PAGE, { teamId: ctx.teamId, now: ctx.now, cursorSecret: ctx.cursorSecret, binding: id });
  await findWebhook(ctx, id);
  const d = ctx.repo.dialect;
  const rows = await recentDeliveries(ctx.db, ctx.teamId, id, limit + 1);
  const { rows: shown, hasMore } = takePage(rows, limit);
  const data = shown.map((r) => ({
    id: r.id,
    webhookId: r.webhook_id,
    eventType: r.event_type,
    status: r.status,
    responseStatus: r.response_status === null || r.response_status === undefined ? null : Number(r.response_status),
    durationMs: Number(r.duration_ms),
    error: r.error ?? null,
    createdAt: iso(d.decode('timestamp', r.created_at) as number),
  }));
  // No cursor and no total on this list (spec Webhook endpoints): `{data, limit, hasMore}`.
  return v3Page({ data, limit, hasMore });
}

export const webhookRoutes: CustomRoute[] = [
  {
    method: 'POST', path: 'webhooks/{id}/rotate-secret', scope: { resource: 'webhooks', action: 'write' }, write: true, subject: 'webhook', noBody: true,
    run: (ctx, { params }) => rotateSecret(ctx, params.id!),
  },
  {
    method: 'POST', path: 'webhooks/{id}/test', scope: { resource: 'webhooks', action: 'write' }, write: false, subject: 'webhook', noBody: true,
    run: (ctx, { params }) => testDelivery(ctx, params.id!),
  },
  {
    method: 'GET', path: 'webhooks/{id}/deliveries', scope: { resource: 'webhooks', action: 'read' }, write: false, subject: 'webhook',
    run: (ctx, { params, query }) => deliveries(ctx, params.id!, query),
  },
];
