import { afterAll, describe, expect, inject, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createMemoryBlobStore, createPmapi, fakeClock, type Pmapi, type Thumbnailer } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { makePng } from '@pmapi/conformance';

/**
 * The file job queue is crash-safe (issue 12: post-processing "as a job, the
 * same durable job machinery as webhook delivery, crash-safe"): a worker that
 * claims a job and dies never finishes it, and once the lease (120 s) has
 * passed another worker takes the job and the file becomes processed; the
 * stalled worker's late result is discarded.
 */

const LEASE_MS = 120_000;
const pgUrl = inject('pgUrl');

const stores: Array<{ name: string; open: () => Promise<{ store: SqlStore; drop(): Promise<void> }> }> = [
  { name: 'sqlite', open: async () => ({ store: await openSqliteStore(), drop: async () => undefined }) },
  ...(pgUrl ? [{
    name: 'postgres',
    open: async () => {
      const schema = `file_jobs_${randomBytes(6).toString('hex')}`;
      const store = await openPostgresStore({ connectionString: pgUrl, schema, max: 4 });
      return { store, drop: () => store.db.schema.dropSchema(schema).cascade().execute() };
    },
  }] : []),
];

describe.each(stores)('[$name] file jobs survive a worker that dies mid-job (issue 12: crash-safe post-processing)', ({ open }) => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of closers.reverse()) await c();
  });

  it('a claimed job whose worker never finishes is taken again after the lease; the file ends processed with one thumbnail', async () => {
    const { store, drop } = await open();
    const clock = fakeClock('2026-05-01T10:00:00.000Z');
    const blobs = createMemoryBlobStore();
    // The first worker's thumbnailer does not return until told: the worker "died" holding the job, and comes back late.
    let wake: (v: { bytes: Uint8Array; extension: string }) => void = () => undefined;
    const stuck: Thumbnailer = { thumbnail: () => new Promise((r) => { wake = r; }) };
    const working: Thumbnailer = { thumbnail: async () => ({ bytes: new Uint8Array([0xff, 0xd8, 0xff, 0xd9]), extension: 'jpg' }) };
    const first: Pmapi = await createPmapi({ store, clock, rateLimiter: false, files: { store: blobs, thumbnailer: stuck } });
    const second: Pmapi = await createPmapi({ store, clock, rateLimiter: false, files: { store: blobs, thumbnailer: working } });
    closers.push(async () => {
      await drop();
      await first.close();
    });
    const ws = await first.admin.createWorkspace({ name: 'Jobs', owner: { name: 'O', email: 'o@jobs.test' } });
    const { token } = await first.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] });
    const call = async (api: Pmapi, method: string, path: string, body?: unknown) => {
      const r = await api.handle({ method, url: `/api/v3${path}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: r.body === undefined ? undefined : JSON.parse(typeof r.body === 'string' ? r.body : new TextDecoder().decode(r.body)) };
    };
    const project = (await call(first, 'POST', '/projects', { name: 'P' })).body;
    const bytes = makePng(8, 8);
    const slot = (await call(first, 'POST', '/files/upload-url', { size: bytes.byteLength })).body;
    const u = new URL(slot.url, 'http://x.invalid');
    expect((await first.handle({ method: 'PUT', url: `${u.pathname}${u.search}`, headers: {}, body: bytes })).status).toBe(200);
    const file = (await call(first, 'POST', '/files', { uploadKey: slot.uploadKey, size: bytes.byteLength, name: 'p.png', projectId: project.id })).body;

    // The first worker claims the job and stalls.
    const late = first.jobs.processFiles();
    await new Promise((r) => setTimeout(r, 50));
    // Within the lease nobody else takes it.
    expect(await second.jobs.processFiles()).toMatchObject({ claimed: 0 });
    expect((await call(second, 'GET', `/files/${file.id}`)).body).toMatchObject({ processed: false, thumbnail: null });
    // After it, the second worker does.
    clock.advance(LEASE_MS + 1000);
    expect(await second.jobs.processFiles()).toMatchObject({ claimed: 1, processed: 1 });
    const done = (await call(second, 'GET', `/files/${file.id}`)).body;
    expect(done.processed).toBe(true);
    expect(typeof done.thumbnail).toBe('string');
    // The first worker's late result is discarded: the lease passed on, so the file keeps the second's thumbnail.
    wake({ bytes: new Uint8Array([1, 2, 3]), extension: 'png' });
    await late;
    const after = (await call(second, 'GET', `/files/${file.id}`)).body;
    expect(after.thumbnail).toBe(done.thumbnail);
    const t = new URL(after.thumbnail, 'http://x.invalid');
    const thumb = await second.handle({ method: 'GET', url: `${t.pathname}${t.search}`, headers: {} });
    expect([...(thumb.body as Uint8Array)]).toEqual([0xff, 0xd8, 0xff, 0xd9]);
    // Nothing is left to do.
    clock.advance(LEASE_MS + 1000);
    expect(await second.jobs.processFiles()).toMatchObject({ claimed: 0 });
  });
});
