import { sql, type Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';
import type { Repo } from '../repo';

/*
 * The storage side of files beyond the resource table: pending uploads (the
 * uploadKey of the upload-URL operation), the workspace quota, and the file
 * job queue (post-processing and removal of bytes), which workers claim with
 * a lease like webhook jobs.
 */

export interface UploadRow {
  id: string;
  teamId: string;
  memberId: string;
  blobKey: string;
  size: number;
  expiresAt: number;
  usedAt: number | null;
}

/** Record an upload the upload-URL operation handed out. */
export async function insertUpload(repo: Repo, u: Omit<UploadRow, 'usedAt'> & { now: number }): Promise<void> {
  const d = repo.dialect;
  await repo.db.insertInto('file_uploads').values({
    id: u.id, team_id: u.teamId, member_id: u.memberId, blob_key: u.blobKey, size: u.size,
    expires_at: d.encode('timestamp', u.expiresAt), used_at: null, created_at: d.encode('timestamp', u.now),
  }).execute();
}

/** The upload with this key in the workspace, locked (where the store can) until the transaction ends. */
export async function takeUpload(repo: Repo, teamId: string, id: string): Promise<UploadRow | undefined> {
  const d = repo.dialect;
  let q = repo.db.selectFrom('file_uploads').selectAll().where('id', '=', id).where('team_id', '=', teamId);
  if (d.capabilities.forUpdate) q = q.forUpdate();
  const r = await q.executeTakeFirst();
  if (!r) return undefined;
  return {
    id: r.id, teamId: r.team_id, memberId: r.member_id, blobKey: r.blob_key, size: Number(r.size),
    expiresAt: d.decode('timestamp', r.expires_at) as number, usedAt: r.used_at === null ? null : (d.decode('timestamp', r.used_at) as number),
  };
}

/** Whether bytes may still be PUT under a blob key: only while its upload is handed out and not yet registered. */
export async function uploadOpen(db: Kysely<any>, blobKey: string): Promise<boolean> {
  const r = await db.selectFrom('file_uploads').select('used_at').where('blob_key', '=', blobKey).executeTakeFirst();
  return r !== undefined && r.used_at === null;
}

export async function markUploadUsed(repo: Repo, id: string, now: number): Promise<void> {
  await repo.db.updateTable('file_uploads').set({ used_at: repo.dialect.encode('timestamp', now) }).where('id', '=', id).execute();
}

/** Forget uploads whose key expired before `before` (their bytes, never registered, are queued for removal by the caller). */
export async function expiredUploads(db: Kysely<any>, d: DialectSupport, before: number, limit: number): Promise<Array<{ id: string; teamId: string; blobKey: string; used: boolean }>> {
  let q = db.selectFrom('file_uploads').select(['id', 'team_id', 'blob_key', 'used_at'])
    .where('expires_at', '<', d.encode('timestamp', before)).limit(limit);
  // A registration still holding the row finishes first; the next sweep sees it used.
  if (d.capabilities.forUpdate) q = q.forUpdate().skipLocked();
  const rows = await q.execute();
  return rows.map((r) => ({ id: r.id, teamId: r.team_id, blobKey: r.blob_key, used: r.used_at !== null }));
}

export async function deleteUploads(db: Kysely<any>, ids: readonly string[]): Promise<void> {
  if (ids.length) await db.deleteFrom('file_uploads').where('id', 'in', ids as string[]).execute();
}

/**
 * Bytes the workspace holds: its files (trashed ones count until purged) and
 * the uploads handed out and not yet registered or expired.
 */
export async function usedBytes(repo: Repo, teamId: string, now: number): Promise<number> {
  const files = await repo.db.selectFrom('files').select(sql<string | number | null>`sum(size)`.as('n')).where('team_id', '=', teamId).executeTakeFirst();
  const pending = await repo.db.selectFrom('file_uploads').select(sql<string | number | null>`sum(size)`.as('n'))
    .where('team_id', '=', teamId).where('used_at', 'is', null).where('expires_at', '>', repo.dialect.encode('timestamp', now)).executeTakeFirst();
  return Number(files?.n ?? 0) + Number(pending?.n ?? 0);
}

/** The workspace's own storage quota, or null for the API's default. */
export async function workspaceQuota(repo: Repo, teamId: string): Promise<number | null> {
  const r = await repo.db.selectFrom('workspaces').select('storage_quota_bytes as q').where('id', '=', teamId).executeTakeFirst();
  return r?.q === null || r?.q === undefined ? null : Number(r.q);
}

export async function setWorkspaceQuota(db: Kysely<any>, teamId: string, bytes: number | null): Promise<void> {
  await db.updateTable('workspaces').set({ storage_quota_bytes: bytes }).where('id', '=', teamId).execute();
}

export type FileJobKind = 'process' | 'delete_blob';

export interface FileJob {
  id: string;
  teamId: string;
  kind: FileJobKind;
  fileId: string | null;
  blobKey: string;
  attempts: number;
  leaseToken: string;
}

/** Queue a job in the caller's transaction (the repository's): it runs only if that commits. */
export async function enqueueFileJob(
  repo: Pick<Repo, 'db' | 'dialect'>, j: { id: string; teamId: string; kind: FileJobKind; fileId: string | null; blobKey: string; now: number },
): Promise<void> {
  const ts = repo.dialect.encode('timestamp', j.now);
  await repo.db.insertInto('file_jobs').values({
    id: j.id, team_id: j.teamId, kind: j.kind, file_id: j.fileId, blob_key: j.blobKey, status: 'pending', attempts: 0,
    next_attempt_at: ts, lease_until: null, lease_token: null, last_error: null, created_at: ts, updated_at: ts,
  }).execute();
}

/**
 * Claim up to `limit` due jobs for `leaseMs`: their next attempt moves to
 * the lease's end, so a worker that dies mid-job loses nothing (another claims
 * the job once the lease ends). Run it in a write transaction: Postgres skips
 * rows other workers hold; SQLite runs it inside its single writer.
 */
export async function claimFileJobs(trx: Kysely<any>, d: DialectSupport, o: { now: number; leaseMs: number; limit: number; token: () => string }): Promise<FileJob[]> {
  {
    let q = trx.selectFrom('file_jobs').selectAll().where('status', '=', 'pending')
      .where('next_attempt_at', '<=', d.encode('timestamp', o.now)).orderBy('next_attempt_at').limit(o.limit);
    if (d.capabilities.forUpdate) q = q.forUpdate().skipLocked();
    const rows = await q.execute();
    const jobs: FileJob[] = [];
    for (const r of rows) {
      const token = o.token();
      const until = d.encode('timestamp', o.now + o.leaseMs);
      await trx.updateTable('file_jobs').set({ lease_token: token, lease_until: until, next_attempt_at: until, attempts: Number(r.attempts) + 1 })
        .where('id', '=', r.id).execute();
      jobs.push({ id: r.id, teamId: r.team_id, kind: r.kind, fileId: r.file_id, blobKey: r.blob_key, attempts: Number(r.attempts) + 1, leaseToken: token });
    }
    return jobs;
  }
}

/** Finish a job (done or failed for good) if the lease is still ours; false when it passed to another worker. */
export async function finishFileJob(db: Kysely<any>, d: DialectSupport, job: FileJob, status: 'done' | 'failed', now: number, error: string | null): Promise<boolean> {
  const r = await db.updateTable('file_jobs').set({ status, last_error: error, lease_token: null, updated_at: d.encode('timestamp', now) })
    .where('id', '=', job.id).where('lease_token', '=', job.leaseToken).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Try a job again at `at` (lease released). */
export async function retryFileJob(db: Kysely<any>, d: DialectSupport, job: FileJob, at: number, now: number, error: string): Promise<void> {
  await db.updateTable('file_jobs').set({
    next_attempt_at: d.encode('timestamp', at), lease_token: null, lease_until: null, last_error: error, updated_at: d.encode('timestamp', now),
  }).where('id', '=', job.id).where('lease_token', '=', job.leaseToken).execute();
}

/** Forget finished jobs older than `before`. */
export async function sweepFileJobs(db: Kysely<any>, d: DialectSupport, before: number): Promise<number> {
  const r = await db.deleteFrom('file_jobs').where('status', 'in', ['done', 'failed']).where('updated_at', '<', d.encode('timestamp', before)).executeTakeFirst();
  return Number(r.numDeletedRows);
}
