import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { SqlStore } from '@pmapi/core/sql';

/** A throwaway self-signed certificate (openssl is on the machine) for localhost, 127.0.0.1, ::1 and hooks.example.test. */
export function selfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'pmapi-wh-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,DNS:hooks.example.test,IP:127.0.0.1,IP:::1',
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
}

export interface Receiver {
  url: string;
  port: number;
  hits: Hit[];
  /** How to answer each request (default 204). */
  answer: (hit: Hit) => Answer;
  close(): Promise<void>;
}

/** A real HTTPS endpoint on 127.0.0.1 with the given certificate. */
export async function httpsReceiver(tls: { key: string; cert: string }, host = '127.0.0.1'): Promise<Receiver> {
  const r: Receiver = { url: '', port: 0, hits: [], answer: () => ({ status: 204 }), close: async () => {} };
  const server: Server = createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit: Hit = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      r.hits.push(hit);
      const a = r.answer(hit);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(a.status ?? 204, a.headers);
        res.end(a.body);
      };
      if (a.delayMs) setTimeout(send, a.delayMs).unref();
      else send();
    });
    req.on('error', () => {});
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((res) => server.listen(0, host, res));
  const port = (server.address() as { port: number }).port;
  r.port = port;
  r.url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  r.close = () =>
    new Promise<void>((res) => {
      server.closeAllConnections();
      server.close(() => res());
    });
  return r;
}

export const TEAM = 'team00000001';

/** Insert a webhook registration directly (independent of the /webhooks routes). */
export async function insertWebhook(
  store: SqlStore,
  now: number,
  o: { id?: string; url: string; secret?: string; apiVersion?: string; active?: boolean; failCount?: number; purgeAt?: number | null },
): Promise<{ id: string; secret: string }> {
  const d = store.dialect;
  const id = o.id ?? `wh${randomBytes(5).toString('hex')}`;
  const secret = o.secret ?? `whsec_${randomBytes(16).toString('hex')}`;
  await store.db.insertInto('webhooks').values({
    id, team_id: TEAM, created_at: d.encode('timestamp', now), updated_at: d.encode('timestamp', now),
    url: o.url, events: d.encode('json', ['*']), api_version: o.apiVersion ?? 'latest', active: d.encode('boolean', o.active ?? true),
    fail_count: o.failCount ?? 0, secret, last_delivered_at: null,
    purge_at: o.purgeAt == null ? null : d.encode('timestamp', o.purgeAt),
  } as any).execute();
  return { id, secret };
}

/** Record one event in the outbox and queue its job for `webhookId`, as the core does in a write's transaction. */
export async function insertEvent(
  store: SqlStore,
  now: number,
  webhookId: string,
  o: { eventId?: string; type?: string; payload?: unknown } = {},
): Promise<{ eventId: string; jobId: string; envelope: Record<string, unknown> }> {
  const d = store.dialect;
  const eventId = o.eventId ?? randomBytes(8).toString('hex');
  const type = o.type ?? 'task.created';
  const envelope = {
    eventId, type, aggregateType: 'task', aggregateId: 'task00000001', teamId: TEAM, projectId: null,
    triggeredBy: { source: 'system' }, timestamp: new Date(now).toISOString(), payload: o.payload ?? { task: { id: 'task00000001', name: 'x' } },
  };
  await store.db.insertInto('outbox').values({
    id: eventId, team_id: TEAM, type, aggregate_type: 'task', aggregate_id: 'task00000001', project_id: null,
    body: d.encode('json', envelope), created_at: d.encode('timestamp', now),
  } as any).execute();
  const jobId = `${webhookId}:${eventId}`;
  await store.db.insertInto('webhook_jobs').values({
    id: jobId, team_id: TEAM, webhook_id: webhookId, event_id: eventId, event_type: type, attempts: 0, status: 'pending',
    next_attempt_at: d.encode('timestamp', now), lease_until: null, lease_token: null,
    created_at: d.encode('timestamp', now), updated_at: d.encode('timestamp', now),
  } as any).execute();
  return { eventId, jobId, envelope };
}

export async function jobRow(store: SqlStore, id: string) {
  const d = store.dialect;
  const r = await store.db.selectFrom('webhook_jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return {
    status: r.status as string, attempts: Number(r.attempts),
    nextAttemptAt: d.decode('timestamp', r.next_attempt_at) as number,
    leaseUntil: r.lease_until == null ? null : (d.decode('timestamp', r.lease_until) as number),
    leaseToken: r.lease_token as string | null,
  };
}

export async function webhookRow(store: SqlStore, id: string) {
  const d = store.dialect;
  const r = await store.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return {
    active: d.decode('boolean', r.active) as boolean, failCount: Number(r.fail_count),
    lastDeliveredAt: r.last_delivered_at == null ? null : (d.decode('timestamp', r.last_delivered_at) as number),
  };
}

export async function deliveries(store: SqlStore, webhookId?: string) {
  const d = store.dialect;
  let q = store.db.selectFrom('webhook_deliveries').selectAll().orderBy('created_at').orderBy('id');
  if (webhookId) q = q.where('webhook_id', '=', webhookId);
  return (await q.execute()).map((r) => ({
    id: r.id as string, webhookId: r.webhook_id as string, eventType: r.event_type as string, status: r.status as string,
    responseStatus: r.response_status == null ? null : Number(r.response_status), durationMs: Number(r.duration_ms),
    error: r.error as string | null, createdAt: d.decode('timestamp', r.created_at) as number,
  }));
}
