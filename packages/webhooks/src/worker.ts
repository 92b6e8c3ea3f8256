import { randomIds, signWebhook, systemClock, type Clock, type IdGenerator, type WebhookAttempt, type WebhookSender } from '@pmapi/core';
import { checkOptionNames, limitOf, type SqlStore } from '@pmapi/core/sql';
import { shortError } from './sender';

/** Spec "Delivery semantics" rule 4: 4 attempts in all. */
export const MAX_ATTEMPTS = 4;
/** Backoff before attempts 2, 3 and 4 (rule 4: roughly 1 s, 10 s, 60 s), jittered by ±20 %. */
export const BACKOFF_MS = [1_000, 10_000, 60_000] as const;
export const BACKOFF_JITTER = 0.2;
/** Rule 5: this many consecutive failed attempts set active false. */
export const AUTO_DISABLE_AFTER = 10;
/** Rule 3: larger events are not sent and count as failures. */
export const PAYLOAD_MAX_BYTES = 1024 * 1024;
/** Rule 7: the delivery log keeps attempts 30 days. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 3600_000;
/** Finished jobs (delivered, failed, dropped) are kept this long, then swept. */
export const FINISHED_JOB_RETENTION_MS = 7 * 24 * 3600_000;
export const USER_AGENT = 'Service-Webhooks/2.0';

export interface WebhookWorkerOptions {
  store: SqlStore;
  sender: WebhookSender;
  /** Where time comes from: due times, leases, backoff, signature `t`, log timestamps. */
  clock?: Clock;
  /** Delivery-log ids and lease tokens (default crypto-random). */
  ids?: IdGenerator;
  /** Jitter source in [0, 1) (default `ids.random`). */
  random?: () => number;
  /** Jobs claimed (and sent concurrently) per round (default 20). */
  batchSize?: number;
  /** How long a claim holds a job; after it, another worker may take the job (default 60 s). */
  leaseMs?: number;
  /** Errors of background rounds started by `start()` (default: ignored). */
  onError?: (err: unknown) => void;
}

/** Every WebhookWorkerOptions key: any other is refused (issue 16, typos are not accepted). */
const WORKER_OPTIONS = ['store', 'sender', 'clock', 'ids', 'random', 'batchSize', 'leaseMs', 'onError'] as const satisfies ReadonlyArray<keyof WebhookWorkerOptions>;
const _allWorkerOptions: Exclude<keyof WebhookWorkerOptions, (typeof WORKER_OPTIONS)[number]> extends never ? true : never = true;
void _allWorkerOptions;

export interface RunResult {
  claimed: number;
  delivered: number;
  failed: number;
  /** Jobs of deleted or inactive webhooks (or missing events), finished without sending. */
  dropped: number;
  /** Results refused because the lease had passed to someone else. */
  stale: number;
}

export interface WebhookWorker {
  /** Claim due jobs once, send them, record the outcomes. */
  runOnce(): Promise<RunResult>;
  /** Run rounds every `intervalMs` (default 1 s; at once again while batches come back full). */
  start(intervalMs?: number): void;
  /** Stop the rounds and wait for the one in flight. */
  stop(): Promise<void>;
  /** Delete log records older than 30 days and finished jobs older than 7 days. */
  sweep(now?: number): Promise<{ deliveries: number; jobs: number }>;
}

interface JobRow {
  id: string;
  team_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempts: number | string;
}

/**
 * The delivery worker: claims due `webhook_jobs` with a lease (Postgres
 * `FOR UPDATE SKIP LOCKED`; SQLite inside its `BEGIN IMMEDIATE` write
 * transaction), POSTs each signed envelope, logs one `webhook_deliveries`
 * record per attempt, and completes or reschedules the job only while its
 * lease token still matches, so a crashed or slow worker's late result is
 * discarded. A killed worker loses nothing: its jobs are claimed again once
 * the lease expires (at least once, same `X-Webhook-Delivery-Id`).
 *
 * @example
 * const worker = createWebhookWorker({ store, sender: createWebhookSender() });
 * worker.start();            // in-process, every second
 * await worker.stop();
 */
export function createWebhookWorker(o: WebhookWorkerOptions): WebhookWorker {
  checkOptionNames('createWebhookWorker', o, WORKER_OPTIONS);
  const { store, sender } = o;
  const d = store.dialect;
  const clock = o.clock ?? systemClock;
  const ids = o.ids ?? randomIds;
  const random = o.random ?? (() => ids.random());
  const batchSize = o.batchSize ?? 20;
  const leaseMs = o.leaseMs ?? 60_000;
  const ts = (ms: number) => d.encode('timestamp', ms) as any;
  const bool = (b: boolean) => d.encode('boolean', b) as any;

  async function claim(now: number, token: string): Promise<JobRow[]> {
    return store.transaction(async (trx) => {
      let q = trx.selectFrom('webhook_jobs').select('id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', ts(now))
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', ts(now))]))
        .orderBy('next_attempt_at').orderBy('id')
        .limit(limitOf(d, batchSize));
      // Postgres: concurrent claimers skip each other's rows. SQLite: the write transaction already excludes them.
      if (d.capabilities.forUpdate) q = q.forUpdate().skipLocked();
      const due = (await q.execute()).map((r) => r.id as string);
      if (due.length === 0) return [];
      return (await trx.updateTable('webhook_jobs')
        .set({ lease_until: ts(now + leaseMs), lease_token: token, updated_at: ts(now) })
        .where('id', 'in', due)
        .returning(['id', 'team_id', 'webhook_id', 'event_id', 'event_type', 'attempts'])
        .execute()) as JobRow[];
    });
  }

  /** Finish a job without sending (webhook gone or paused, event missing). */
  async function drop(job: JobRow, token: string, now: number): Promise<boolean> {
    const r = await store.db.updateTable('webhook_jobs')
      .set({ status: 'dropped', lease_until: null, lease_token: null, updated_at: ts(now) })
      .where('id', '=', job.id).where('lease_token', '=', token)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async function deliver(job: JobRow, token: string): Promise<'delivered' | 'failed' | 'dropped' | 'stale'> {
    const hook = await store.db.selectFrom('webhooks')
      .select(['id', 'url', 'secret', 'api_version', 'active', 'purge_at'])
      .where('id', '=', job.webhook_id).executeTakeFirst();
    if (!hook || hook.purge_at != null || !d.decode('boolean', hook.active)) {
      return (await drop(job, token, clock.now())) ? 'dropped' : 'stale';
    }
    const event = await store.db.selectFrom('outbox').select(['body']).where('id', '=', job.event_id).executeTakeFirst();
    if (!event) return (await drop(job, token, clock.now())) ? 'dropped' : 'stale';
    // The envelope as stored (SQLite keeps the text; Postgres jsonb comes back parsed).
    const body = typeof event.body === 'string' ? event.body : JSON.stringify(event.body);

    let attempt: WebhookAttempt;
    if (Buffer.byteLength(body) > PAYLOAD_MAX_BYTES) {
      attempt = { ok: false, status: null, durationMs: 0, error: 'payload too large' };
    } else {
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        'User-Agent': USER_AGENT,
        'X-Webhook-Id': hook.id,
        'X-Webhook-Event': job.event_type,
        'X-Webhook-Delivery-Id': `${job.webhook_id}:${job.event_id}`,
        // Signed afresh on every attempt, with the secret current now (rotation has no overlap).
        'X-Webhook-Signature': signWebhook(hook.secret, body, Math.floor(clock.now() / 1000)),
        'X-Api-Version': String(hook.api_version),
      };
      try {
        attempt = await sender({ url: hook.url, headers, body });
      } catch (err) {
        attempt = { ok: false, status: null, durationMs: 0, error: shortError(`sender error: ${(err as Error)?.message ?? err}`) };
      }
    }
    return record(job, token, attempt);
  }

  async function record(job: JobRow, token: string, a: WebhookAttempt): Promise<'delivered' | 'failed' | 'stale'> {
    const now = clock.now();
    const attempts = Number(job.attempts) + 1;
    return store.transaction(async (trx) => {
      let jobSet: Record<string, unknown>;
      if (a.ok) {
        jobSet = { status: 'delivered', attempts, lease_until: null, lease_token: null, updated_at: ts(now) };
      } else if (attempts < MAX_ATTEMPTS) {
        const base = BACKOFF_MS[attempts - 1]!;
        const delay = Math.round(base * (1 + (random() * 2 - 1) * BACKOFF_JITTER));
        jobSet = { status: 'pending', attempts, next_attempt_at: ts(now + delay), lease_until: null, lease_token: null, updated_at: ts(now) };
      } else {
        jobSet = { status: 'failed', attempts, lease_until: null, lease_token: null, updated_at: ts(now) };
      }
      // Only the holder of the current lease may record: 0 rows = a late result, discarded.
      const r = await trx.updateTable('webhook_jobs').set(jobSet)
        .where('id', '=', job.id).where('lease_token', '=', token)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return 'stale';
      await trx.insertInto('webhook_deliveries').values({
        id: ids.id(), team_id: job.team_id, webhook_id: job.webhook_id, event_type: job.event_type,
        status: a.ok ? 'delivered' : 'failed', response_status: a.status, duration_ms: Math.max(0, Math.round(a.durationMs)),
        error: a.ok ? null : shortError(a.error ?? 'failed'), created_at: ts(now),
      }).execute();
      if (a.ok) {
        await trx.updateTable('webhooks').set({ fail_count: 0, last_delivered_at: ts(now) })
          .where('id', '=', job.webhook_id).execute();
      } else {
        // Consecutive failures are counted per attempt; the 10th pauses the webhook.
        await trx.updateTable('webhooks').set((eb) => ({
          fail_count: eb('fail_count', '+', 1),
          active: eb.case().when('fail_count', '>=', AUTO_DISABLE_AFTER - 1).then(bool(false)).else(eb.ref('active')).end(),
        })).where('id', '=', job.webhook_id).execute();
      }
      return a.ok ? 'delivered' : 'failed';
    });
  }

  async function runOnce(): Promise<RunResult> {
    const token = ids.uuid();
    const jobs = await claim(clock.now(), token);
    const out: RunResult = { claimed: jobs.length, delivered: 0, failed: 0, dropped: 0, stale: 0 };
    const results = await Promise.all(jobs.map((j) => deliver(j, token)));
    for (const r of results) out[r]++;
    return out;
  }

  async function sweep(now = clock.now()) {
    const del = await store.db.deleteFrom('webhook_deliveries')
      .where('created_at', '<', ts(now - DELIVERY_LOG_RETENTION_MS)).executeTakeFirst();
    const jobs = await store.db.deleteFrom('webhook_jobs')
      .where('status', 'in', ['delivered', 'failed', 'dropped'])
      .where('updated_at', '<', ts(now - FINISHED_JOB_RETENTION_MS)).executeTakeFirst();
    return { deliveries: Number(del.numDeletedRows), jobs: Number(jobs.numDeletedRows) };
  }

  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<unknown> | undefined;
  let sweeping: Promise<unknown> | undefined;
  let stopped = true;
  function start(intervalMs = 1_000) {
    if (!stopped) return;
    stopped = false;
    let lastSweep = 0;
    const tick = () => {
      // Once an hour the background worker also trims the delivery log (30 days) and finished jobs.
      if (clock.now() - lastSweep >= 3_600_000) {
        lastSweep = clock.now();
        sweeping = sweep().catch((err) => o.onError?.(err));
      }
      running = runOnce().then(
        (r) => r.claimed >= batchSize,
        (err) => {
          o.onError?.(err);
          return false;
        },
      ).then((full) => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, full ? 0 : intervalMs);
      });
    };
    timer = setTimeout(tick, 0);
  }
  async function stop() {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = undefined;
    // The round in flight (and an hourly sweep) finish before stop resolves: the store may be closed after it.
    await Promise.all([running, sweeping]);
  }

  return { runOnce, start, stop, sweep };
}
