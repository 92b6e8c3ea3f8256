import type { Engine } from '../services/engine';
import type { PendingEvent, Principal } from '../services/context';
import type { SqlStore } from '../sql/dialect';
import { Repo } from '../sql/repo';
import { announce } from '../services/records';
import { claimFileJobs, deleteUploads, enqueueFileJob, expiredUploads, finishFileJob, retryFileJob, sweepFileJobs, type FileJob } from '../sql/queries/files';

/*
 * The file job queue (issue 12): post-processing of new files (the
 * thumbnail) and removal of bytes whose file or upload is gone. Jobs are
 * written in the transaction that makes them due, claimed with a lease
 * (FOR UPDATE SKIP LOCKED on Postgres), and finished only while the lease
 * holds, so a crashed worker's job is simply taken again: at least once,
 * and every job is safe to repeat.
 */

/** Backoff before attempts 2-5; after the fifth failed attempt a job is given up. */
export const FILE_JOB_BACKOFF_MS = [10_000, 60_000, 300_000, 1_800_000] as const;
export const FILE_JOB_LEASE_MS = 120_000;
/** Files larger than this are processed without a thumbnail (decoding them costs too much memory). */
export const THUMBNAIL_SOURCE_MAX_BYTES = 50 * 1024 * 1024;
/** Finished jobs are kept this long, then swept. */
export const FILE_JOB_RETENTION_MS = 7 * 24 * 3600_000;

export interface FileJobsResult {
  claimed: number;
  processed: number;
  removed: number;
  retried: number;
  failed: number;
}

/** Run due file jobs once (at most `limit`), one after another. */
export async function runFileJobs(engine: Engine, store: SqlStore, system: Principal, limit = 20): Promise<FileJobsResult> {
  const { clock, ids, files } = engine.config;
  const out: FileJobsResult = { claimed: 0, processed: 0, removed: 0, retried: 0, failed: 0 };
  const jobs = await store.transaction((trx) => claimFileJobs(trx, store.dialect, { now: clock.now(), leaseMs: FILE_JOB_LEASE_MS, limit, token: () => ids.uuid() }));
  out.claimed = jobs.length;
  for (const job of jobs) {
    try {
      if (job.kind === 'delete_blob') {
        await files.requireStore().delete(job.blobKey);
        if (await finishFileJob(store.db, store.dialect, job, 'done', clock.now(), null)) out.removed++;
      } else {
        await processFile(engine, store, system, job);
        out.processed++;
      }
    } catch (err) {
      const message = err instanceof Error ? err.message.slice(0, 500) : String(err).slice(0, 500);
      const wait = FILE_JOB_BACKOFF_MS[job.attempts - 1];
      if (wait === undefined) {
        // Given up: a file still waiting is marked processed without a thumbnail, so nobody waits forever.
        if (job.kind === 'process') await markProcessed(engine, store, system, job, null).catch(() => undefined);
        await finishFileJob(store.db, store.dialect, job, 'failed', clock.now(), message);
        out.failed++;
      } else {
        await retryFileJob(store.db, store.dialect, job, clock.now() + wait, clock.now(), message);
        out.retried++;
      }
    }
  }
  return out;
}

/** Make the thumbnail of a file (when its bytes are an image the thumbnailer reads) and mark it processed. */
async function processFile(engine: Engine, store: SqlStore, system: Principal, job: FileJob): Promise<void> {
  const { files, registry } = engine.config;
  const blobs = files.requireStore();
  const file = job.fileId ? await new Repo(store.db, store.dialect).get(registry.get('file'), job.teamId, job.fileId, { includeTrashed: true }) : undefined;
  if (!file) {
    await finishFileJob(store.db, store.dialect, job, 'done', engine.config.clock.now(), 'file gone');
    return;
  }
  let thumbnailKey: string | null = null;
  const size = await blobs.size(job.blobKey);
  if (files.thumbnailer && size !== undefined && size <= THUMBNAIL_SOURCE_MAX_BYTES) {
    const bytes = await blobs.get(job.blobKey);
    const thumb = bytes && (await files.thumbnailer.thumbnail(bytes, String(file.name)));
    if (thumb) {
      // A key of this attempt's own: a worker whose lease ran out never removes the winner's thumbnail.
      thumbnailKey = `${job.blobKey}-thumbnail-${job.attempts}-${thumb.extension === 'png' ? 'png' : 'jpg'}`;
      await blobs.put(thumbnailKey, thumb.bytes);
    }
  }
  if (!(await markProcessed(engine, store, system, job, thumbnailKey)) && thumbnailKey) await blobs.delete(thumbnailKey);
}

/**
 * In one transaction, while the job's lease holds: the file becomes
 * processed with its thumbnail (file.updated, triggered by the system) and
 * the job is done. False when the lease passed to another worker or the
 * file is gone (the caller then drops what it made).
 */
async function markProcessed(engine: Engine, store: SqlStore, system: Principal, job: FileJob, thumbnailKey: string | null): Promise<boolean> {
  const { registry, clock, ids } = engine.config;
  const res = registry.get('file');
  return store.transaction(async (trx) => {
    const now = clock.now();
    if (!(await finishFileJob(trx, store.dialect, job, 'done', now, null))) return false;
    const principal = { ...system, teamId: job.teamId };
    const events: PendingEvent[] = [];
    const ctx = engine.writeContext(principal, trx, events);
    const file = job.fileId ? await ctx.repo.get(res, job.teamId, job.fileId, { includeTrashed: true, lock: true }) : undefined;
    if (!file) {
      if (thumbnailKey) await enqueueFileJob({ db: trx, dialect: store.dialect }, { id: ids.id(), teamId: job.teamId, kind: 'delete_blob', fileId: null, blobKey: thumbnailKey, now });
      return true;
    }
    const values = { processed: true, thumbnailKey, updatedAt: ctx.stamp(file.updatedAt) };
    await ctx.repo.update(res, job.teamId, file.id, values);
    await announce(ctx, res, { ...file, ...values }, 'updated');
    await engine.flushEvents(trx, principal, events, now);
    return true;
  });
}

/**
 * Uploads whose key expired: the bytes of those never registered are queued
 * for removal, and the records go. Returns how many records went.
 */
export async function sweepUploads(store: SqlStore, engine: Engine, now: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await store.transaction(async (trx) => {
      const rows = await expiredUploads(trx, store.dialect, now, 200);
      for (const r of rows) {
        if (!r.used) await enqueueFileJob({ db: trx, dialect: store.dialect }, { id: engine.config.ids.id(), teamId: r.teamId, kind: 'delete_blob', fileId: null, blobKey: r.blobKey, now });
      }
      await deleteUploads(trx, rows.map((r) => r.id));
      return rows.length;
    });
    total += n;
    if (n < 200) break;
  }
  total += await sweepFileJobs(store.db, store.dialect, now - FILE_JOB_RETENTION_MS);
  return total;
}
