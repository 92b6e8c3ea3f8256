import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryBlobStore, type BlobStore, type FakeClock, type HttpResponse, type PmapiOptions } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import { createSharpThumbnailer } from '@pmapi/thumbnails';
import { createUrlFetcher } from '@pmapi/webhooks';
import { harness, type Harness, type Reply, type StoreFactory } from '../../kit';
import { imageInfo, makePng } from '../../images';
import { during, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';

/**
 * Files and annotations (spec "File", "Annotation", "States and transitions",
 * "Standard operations" rule 12, "Events", "Errors", "Limits"), with the
 * decisions of docs/not-shown.md "Conversations and files" (File places,
 * Upload flow, Create from content and upload from URL, url/download/thumbnail,
 * Storage quota, Post-processing, Deleting files, Annotation fields,
 * Annotation threads) and "Signed blob links".
 */

/** Constants of the spec and of the decisions, kept here as data (tests never read the spec). */
const FILE_NAME_MAX = 255;
const FILE_SIZE_MAX = 2_147_483_646;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const UPLOAD_URL_TTL_MS = 15 * MINUTE;
const UPLOAD_KEY_TTL_MS = 24 * HOUR;
/** Largest upload through pmapi's own links by default (docs/not-shown.md "Upload flow"). */
const LOCAL_UPLOAD_MAX = 64 * 1024 * 1024;
const RETENTION_MS = 30 * DAY;
const THUMBNAIL_MAX_PX = 256;
/** Spec "File" and "Annotation": the expand targets. */
const FILE_EXPANDS = ['uploader', 'deletedBy', 'createdByActor', 'updatedByActor', 'project', 'task', 'document', 'message', 'annotationTask', 'annotations', 'subscribers', 'labels'];
const ANNOTATION_EXPANDS = ['file', 'task', 'messages', 'createdByActor', 'updatedByActor'];

// ---------------------------------------------------------------------------

/** The bytes of a raw response. */
function bytesOf(res: HttpResponse): Uint8Array {
  const b = res.body;
  if (b === undefined) return new Uint8Array(0);
  return typeof b === 'string' ? new TextEncoder().encode(b) : new Uint8Array(b);
}

/** The parsed problem body of a raw response (for blob links). */
function jsonOf(res: HttpResponse): any {
  return JSON.parse(new TextDecoder().decode(bytesOf(res)));
}

function sameBytes(a: Uint8Array, b: Uint8Array): void {
  expect(Buffer.from(a).equals(Buffer.from(b)), `got ${a.byteLength} bytes, expected ${b.byteLength}`).toBe(true);
}

/** A raw blob-link answer is the problem `code` with `status`. */
function linkProblem(res: HttpResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.status === 200 ? undefined : jsonOf(res).code }).toEqual({ status, code });
}

/** A 400 validation_failed with an error at `field` or under it (`field.x`), with `code` when given. */
function invalidUnder(r: Reply, field: string, code?: string): void {
  const b = problem(r, 400, 'validation_failed');
  const hits = (b.errors ?? []).filter((e: any) => e.field === field || String(e.field).startsWith(`${field}.`));
  expect(hits.length, JSON.stringify(b.errors)).toBeGreaterThan(0);
  if (code) expect(hits.map((e: any) => e.code), JSON.stringify(b.errors)).toContain(code);
}

const ids = (r: Reply): string[] => ok(r).data.map((x: any) => x.id);

/** Run due file jobs until none is left. */
async function drainJobs(h: Harness): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const r = await h.api.jobs.processFiles();
    if (r.claimed === 0) return;
  }
  throw new Error('file jobs never drained');
}

/** The blob key inside a signed link `/api/v3/blobs/<key>?…`. */
function keyOfLink(url: string): string {
  const path = new URL(url, 'http://in-process.invalid').pathname;
  return decodeURIComponent(path.replace(/^.*?\/blobs\//, ''));
}

type ApiOptions = (clock: FakeClock, store: SqlStore) => Partial<PmapiOptions>;

/** A fresh harness for the enclosing describe, with its own API options (file store, thumbnailer, fetcher…). */
function perDescribe(factory: StoreFactory, api?: ApiOptions): () => Harness {
  let h: Harness;
  beforeAll(async () => {
    h = await harness(factory, api ? { api } : {});
  });
  afterAll(() => h?.close());
  return () => h;
}

export function filesSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Files: upload flow (upload URL → PUT → POST /files; docs/not-shown.md "Upload flow", "Signed blob links")`, () => {
    const H = perDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Upload P', members: [H().a.owner.id, H().a.regular.id, H().a.client.id] });
    });
    const slot = async (size: number, token?: string) => ok(await H().post('/files/upload-url', { size }, { token }));
    const put = (url: string, bytes: Uint8Array) => H().fetchLink('PUT', url, bytes);

    it('POST /files/upload-url {size} → 200 {uploadKey, url, method: PUT, size, expiresAt (15 min)} and emits file.createUploadUrl with that body less the url (a credential)', async () => {
      const { result, events } = await during(H(), () => H().post('/files/upload-url', { size: 12 }));
      const body = ok(result);
      expect(Object.keys(body).sort()).toEqual(['expiresAt', 'method', 'size', 'uploadKey', 'url']);
      expect(body).toMatchObject({ method: 'PUT', size: 12 });
      expect(typeof body.uploadKey).toBe('string');
      expect(typeof body.url).toBe('string');
      expect(Date.parse(body.expiresAt)).toBe(Math.floor((H().clock.now() + UPLOAD_URL_TTL_MS) / 1000) * 1000);
      const [ev] = ofType(events, 'file.createUploadUrl');
      expect(ev, JSON.stringify(events.map((e) => e.type))).toBeDefined();
      const { url: _url, ...announced } = body;
      expect(ev.payload.file).toEqual(announced);
      expect(events.filter((e) => e.type !== 'file.createUploadUrl').map((e) => e.type)).toEqual([]);
    });

    it('the upload-URL body is exactly {size}: unknown keys, missing, negative, fractional, non-number and > 2,147,483,646 are 400; through pmapi\'s own links at most 64 MiB (too_big)', async () => {
      invalid(await H().post('/files/upload-url', { size: 5, name: 'a.txt' }), 'name', 'unrecognized_key');
      invalid(await H().post('/files/upload-url', {}), 'size');
      invalid(await H().post('/files/upload-url', { size: -1 }), 'size');
      invalid(await H().post('/files/upload-url', { size: 1.5 }), 'size');
      invalid(await H().post('/files/upload-url', { size: '5' }), 'size');
      invalid(await H().post('/files/upload-url', { size: FILE_SIZE_MAX + 1 }), 'size');
      invalid(await H().post('/files/upload-url', { size: LOCAL_UPLOAD_MAX + 1 }), 'size', 'too_big');
      expect(ok(await H().post('/files/upload-url', { size: LOCAL_UPLOAD_MAX })).size).toBe(LOCAL_UPLOAD_MAX);
      expect(ok(await H().post('/files/upload-url', { size: 0 })).size).toBe(0);
    });

    it('with the local cap raised (files.maxUploadBytes), the spec\'s maximum size 2,147,483,646 is accepted', async () => {
      const big = await harness(factory, { api: () => ({ files: { store: createMemoryBlobStore(), maxUploadBytes: FILE_SIZE_MAX } }) });
      try {
        expect(ok(await big.post('/files/upload-url', { size: FILE_SIZE_MAX })).size).toBe(FILE_SIZE_MAX);
        invalid(await big.post('/files/upload-url', { size: FILE_SIZE_MAX + 1 }), 'size');
      } finally {
        await big.close();
      }
    });

    it('the PUT takes exactly `size` bytes (else 400), the link is refused once tampered (403 link_invalid), for GET (403 link_invalid) and after 15 minutes (403 link_expired)', async () => {
      const data = new TextEncoder().encode('hello world!');
      const s = await slot(data.byteLength);
      const short = await put(s.url, data.subarray(0, 11));
      expect(short.status).toBe(400);
      expect(jsonOf(short).code).toBe('validation_failed');
      expect((await put(s.url, new Uint8Array([...data, 0]))).status).toBe(400);

      const tampered = new URL(s.url, 'http://x.invalid');
      tampered.searchParams.set('size', '3');
      linkProblem(await put(`${tampered.pathname}${tampered.search}`, data.subarray(0, 3)), 403, 'link_invalid');
      const badSig = new URL(s.url, 'http://x.invalid');
      const sig = badSig.searchParams.get('sig')!;
      badSig.searchParams.set('sig', `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`);
      linkProblem(await put(`${badSig.pathname}${badSig.search}`, data), 403, 'link_invalid');
      linkProblem(await H().fetchLink('GET', s.url), 403, 'link_invalid');
      // The refusals stored nothing; the exact bytes are taken.
      invalid(await H().post('/files', { uploadKey: s.uploadKey, name: 'early.txt', size: data.byteLength, projectId: p.id }), 'uploadKey', 'not_uploaded');
      expect((await put(s.url, data)).status).toBe(200);

      const late = await slot(data.byteLength);
      H().clock.advance(UPLOAD_URL_TTL_MS - 1000);
      const inTime = await slot(data.byteLength);
      expect((await put(late.url, data)).status).toBe(200);
      H().clock.advance(2000);
      linkProblem(await put(late.url, data), 403, 'link_expired');
      H().clock.advance(UPLOAD_URL_TTL_MS);
      linkProblem(await put(inTime.url, data), 403, 'link_expired');
      invalid(await H().post('/files', { uploadKey: inTime.uploadKey, name: 'late.txt', size: data.byteLength, projectId: p.id }), 'uploadKey', 'not_uploaded');
    });

    it('POST /files registers the upload: 201, name trimmed, uploadKey never shown, uploaderId the caller, processed false, thumbnail null; file.created carries the response', async () => {
      const data = new TextEncoder().encode('register me');
      const s = await slot(data.byteLength);
      expect((await put(s.url, data)).status).toBe(200);
      const { result, events } = await during(H(), () => H().post('/files', { uploadKey: s.uploadKey, name: '  notes.txt \t', size: data.byteLength, projectId: p.id }));
      const f = ok(result, 201);
      expect(f).toMatchObject({
        name: 'notes.txt', size: data.byteLength, projectId: p.id, taskId: null, documentId: null, messageId: null, folderId: null,
        folderStack: [], processed: false, thumbnail: null, uploaderId: H().a.owner.id, annotationTaskId: null, purgeAt: null,
      });
      expect(f).not.toHaveProperty('uploadKey');
      expect(f).not.toHaveProperty('blobKey');
      expect(typeof f.url).toBe('string');
      expect(typeof f.download).toBe('string');
      const [ev] = ofType(events, 'file.created', f.id);
      expect(ev.payload.file).toEqual(f);
      expect(ev.projectId).toBe(p.id);
      expect(ok(await H().get(`/files/${f.id}`))).toEqual(f);
    });

    it('name: blank is 400, 256 characters is 400, 255 is accepted; a refused register does not spend the uploadKey', async () => {
      const data = new TextEncoder().encode('n');
      const s = await slot(1);
      await put(s.url, data);
      const body = { uploadKey: s.uploadKey, size: 1, projectId: p.id };
      invalid(await H().post('/files', { ...body, name: '   ' }), 'name');
      invalid(await H().post('/files', { ...body }), 'name');
      invalid(await H().post('/files', { ...body, name: 'n'.repeat(FILE_NAME_MAX + 1) }), 'name');
      const f = ok(await H().post('/files', { ...body, name: 'n'.repeat(FILE_NAME_MAX) }), 201);
      expect(f.name).toHaveLength(FILE_NAME_MAX);
    });

    it('server-assigned fields sent in the create body are ignored (rule 1): processed, thumbnail, folderStack, uploaderId, annotationTaskId, url', async () => {
      const r = await H().upload('ro', {
        name: 'ro.txt', projectId: p.id, processed: true, thumbnail: 'https://evil.example/t.png', folderStack: ['x'], uploaderId: H().a.regular.id,
        annotationTaskId: 'sometask123', url: 'https://evil.example/', download: 'https://evil.example/',
      });
      const f = ok(r, 201);
      expect(f).toMatchObject({ processed: false, thumbnail: null, folderStack: [], uploaderId: H().a.owner.id, annotationTaskId: null });
      expect(f.url).not.toContain('evil.example');
      expect(f.download).not.toContain('evil.example');
    });

    it('uploadKey rules: size other than the upload\'s → size_mismatch; no bytes yet → not_uploaded; reuse, another member\'s key, an unknown key and a key older than 24 h → invalid_upload_key', async () => {
      const data = new TextEncoder().encode('five!');
      const s = await slot(data.byteLength);
      invalid(await H().post('/files', { uploadKey: s.uploadKey, name: 'early.txt', size: data.byteLength, projectId: p.id }), 'uploadKey', 'not_uploaded');
      await put(s.url, data);
      invalid(await H().post('/files', { uploadKey: s.uploadKey, name: 'a.txt', size: data.byteLength + 1, projectId: p.id }), 'size', 'size_mismatch');
      // Another member cannot register it.
      invalid(await H().post('/files', { uploadKey: s.uploadKey, name: 'a.txt', size: data.byteLength, projectId: p.id }, { token: H().a.regular.token }), 'uploadKey', 'invalid_upload_key');
      ok(await H().post('/files', { uploadKey: s.uploadKey, name: 'a.txt', size: data.byteLength, projectId: p.id }), 201);
      // Once only.
      invalid(await H().post('/files', { uploadKey: s.uploadKey, name: 'again.txt', size: data.byteLength, projectId: p.id }), 'uploadKey', 'invalid_upload_key');
      invalid(await H().post('/files', { uploadKey: 'nosuchkey123', name: 'x.txt', size: 1, projectId: p.id }), 'uploadKey', 'invalid_upload_key');

      // Registered within 24 hours, else refused.
      const old = await slot(data.byteLength);
      await put(old.url, data);
      H().clock.advance(UPLOAD_KEY_TTL_MS + 1000);
      invalid(await H().post('/files', { uploadKey: old.uploadKey, name: 'old.txt', size: data.byteLength, projectId: p.id }), 'uploadKey', 'invalid_upload_key');
      // Just under 24 hours still works.
      const fresh = await slot(data.byteLength);
      await put(fresh.url, data);
      H().clock.advance(UPLOAD_KEY_TTL_MS - MINUTE);
      ok(await H().post('/files', { uploadKey: fresh.uploadKey, name: 'fresh.txt', size: data.byteLength, projectId: p.id }), 201);
    });

    it('an uploadKey of another workspace is invalid_upload_key; a client (guest) may read files but not upload (403 permission_denied)', async () => {
      const data = new TextEncoder().encode('b');
      const s = ok(await H().post('/files/upload-url', { size: 1 }, { token: H().b.owner.token }));
      await put(s.url, data);
      invalid(await H().post('/files', { uploadKey: s.uploadKey, name: 'b.txt', size: 1, projectId: p.id }), 'uploadKey', 'invalid_upload_key');
      problem(await H().post('/files/upload-url', { size: 1 }, { token: H().a.client.token }), 403, 'permission_denied');
      const f = ok(await H().upload('readable', { name: 'r.txt', projectId: p.id }), 201);
      expect(ok(await H().get(`/files/${f.id}`, { token: H().a.client.token })).id).toBe(f.id);
      problem(await H().del(`/files/${f.id}`, { token: H().a.client.token }), 403, 'permission_denied');
    });
  });

  describe(`[${factory.name}] v3 Files: places (docs/not-shown.md "File places"), folderStack and the one changeable parent`, () => {
    const H = perDescribe(factory);
    let p: any;
    let q: any;
    let t: any;
    let d: any;
    let folderP: any;
    let folderQ: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Places P', members: [H().a.owner.id, H().a.regular.id] });
      q = await H().project({ name: 'Places Q' });
      t = await H().task(p.id, { name: 'Holder' });
      d = ok(await H().post('/documents', { title: 'Spec', projectId: p.id }), 201);
      folderP = ok(await H().post('/document-folders', { name: 'Assets', projectId: p.id }), 201);
      folderQ = ok(await H().post('/document-folders', { name: 'Elsewhere', projectId: q.id }), 201);
    });

    it('no place at all is 400 context_required on projectId', async () => {
      invalid(await H().upload('x', { name: 'nowhere.txt' }), 'projectId', 'context_required');
    });

    it('two of taskId, documentId, messageId are one_context (each named)', async () => {
      const r = await H().upload('x', { name: 'two.txt', taskId: t.id, documentId: d.id });
      invalid(r, 'taskId', 'one_context');
      invalid(r, 'documentId', 'one_context');
    });

    it('projectId beside taskId/documentId must be its project, and folderId a folder of the file\'s project (400 wrong_project)', async () => {
      invalid(await H().upload('x', { name: 'a.txt', taskId: t.id, projectId: q.id }), 'projectId', 'wrong_project');
      invalid(await H().upload('x', { name: 'a.txt', documentId: d.id, projectId: q.id }), 'projectId', 'wrong_project');
      invalid(await H().upload('x', { name: 'a.txt', projectId: p.id, folderId: folderQ.id }), 'folderId', 'wrong_project');
      invalid(await H().upload('x', { name: 'a.txt', taskId: t.id, folderId: folderQ.id }), 'folderId', 'wrong_project');
      // The right project beside its task is fine.
      expect(ok(await H().upload('x', { name: 'ok.txt', taskId: t.id, projectId: p.id }), 201).projectId).toBe(p.id);
    });

    it('an unknown or other-workspace parent is 404 resource_not_found', async () => {
      problem(await H().upload('x', { name: 'a.txt', taskId: 'nosuchtask1' }), 404, 'resource_not_found');
      const bp = ok(await H().post('/projects', { name: 'B places' }, { token: H().b.owner.token }), 201);
      const bt = ok(await H().post('/tasks', { name: 'B task', projectId: bp.id }, { token: H().b.owner.token }), 201);
      problem(await H().upload('x', { name: 'a.txt', taskId: bt.id }), 404, 'resource_not_found');
    });

    it('projectId is derived from taskId, documentId and folderId; folderStack is [] without a folder', async () => {
      const byTask = ok(await H().upload('t', { name: 'task.txt', taskId: t.id }), 201);
      expect(byTask).toMatchObject({ projectId: p.id, taskId: t.id, documentId: null, folderId: null, folderStack: [] });
      const byDoc = ok(await H().upload('d', { name: 'doc.txt', documentId: d.id }), 201);
      expect(byDoc).toMatchObject({ projectId: p.id, documentId: d.id, taskId: null });
      const byFolder = ok(await H().upload('f', { name: 'folder.txt', folderId: folderP.id }), 201);
      expect(byFolder).toMatchObject({ projectId: p.id, folderId: folderP.id, folderStack: [folderP.id] });
      const both = ok(await H().upload('tf', { name: 'task-folder.txt', taskId: t.id, folderId: folderP.id }), 201);
      expect(both).toMatchObject({ projectId: p.id, taskId: t.id, folderId: folderP.id, folderStack: [folderP.id] });
    });

    it('folderStack runs from the project root to the folder, and follows folder moves (PATCH parentId) and folder deletion (the file moves up), each with file.updated', async () => {
      const root = ok(await H().post('/document-folders', { name: 'Root', projectId: p.id }), 201);
      const mid = ok(await H().post('/document-folders', { name: 'Mid', projectId: p.id, parentId: root.id }), 201);
      const leaf = ok(await H().post('/document-folders', { name: 'Leaf', projectId: p.id, parentId: mid.id }), 201);
      const other = ok(await H().post('/document-folders', { name: 'Other root', projectId: p.id }), 201);
      const f = ok(await H().upload('deep', { name: 'deep.txt', folderId: leaf.id }), 201);
      expect(f.folderStack).toEqual([root.id, mid.id, leaf.id]);

      const moved = await during(H(), () => H().patch(`/document-folders/${mid.id}`, { parentId: other.id }));
      ok(moved.result);
      expect(ok(await H().get(`/files/${f.id}`)).folderStack).toEqual([other.id, mid.id, leaf.id]);
      const [ev] = ofType(moved.events, 'file.updated', f.id);
      expect(ev?.payload.file.folderStack).toEqual([other.id, mid.id, leaf.id]);

      const removed = await during(H(), () => H().del(`/document-folders/${leaf.id}`));
      ok(removed.result, 204);
      const after = ok(await H().get(`/files/${f.id}`));
      expect(after).toMatchObject({ folderId: mid.id, folderStack: [other.id, mid.id] });
      expect(ofType(removed.events, 'file.updated', f.id)).toHaveLength(1);
    });

    it('when a task moves to another project its files move with it (file.updated with the new projectId), and so does who may see them', async () => {
      const mover = await H().task(p.id, { name: 'Mover' });
      const f = ok(await H().upload('moving', { name: 'moving.txt', taskId: mover.id }), 201);
      const closed = await H().project({ name: 'Places closed', accessType: 'limited', members: [H().a.owner.id] });
      const { result, events } = await during(H(), () => H().patch(`/tasks/${mover.id}`, { projectId: closed.id }));
      ok(result);
      expect(ok(await H().get(`/files/${f.id}`))).toMatchObject({ projectId: closed.id, taskId: mover.id });
      expect(ofType(events, 'file.updated', f.id).map((e) => e.payload.file.projectId)).toEqual([closed.id]);
      expect(ids(await H().get(`/files?projectId[eq]=${closed.id}`))).toEqual([f.id]);
      problem(await H().get(`/files/${f.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');
    });

    it('folderId is the only parent that changes: PATCH folderId (same project) re-derives folderStack, another project\'s folder is wrong_project; projectId, taskId, documentId and size are immutable (the same value is accepted)', async () => {
      const f = ok(await H().upload('move', { name: 'move.txt', taskId: t.id }), 201);
      const sub = ok(await H().post('/document-folders', { name: 'Sub', projectId: p.id, parentId: folderP.id }), 201);
      const { result, events } = await during(H(), () => H().patch(`/files/${f.id}`, { folderId: sub.id }));
      expect(ok(result)).toMatchObject({ folderId: sub.id, folderStack: [folderP.id, sub.id], taskId: t.id, projectId: p.id });
      expect(ofType(events, 'file.updated', f.id)[0].payload.file).toEqual(ok(result));
      invalid(await H().patch(`/files/${f.id}`, { folderId: folderQ.id }), 'folderId', 'wrong_project');
      expect(ok(await H().patch(`/files/${f.id}`, { folderId: null })).folderStack).toEqual([]);

      const t2 = await H().task(p.id, { name: 'Other holder' });
      invalid(await H().patch(`/files/${f.id}`, { projectId: q.id }), 'projectId', 'immutable');
      invalid(await H().patch(`/files/${f.id}`, { taskId: t2.id }), 'taskId', 'immutable');
      invalid(await H().patch(`/files/${f.id}`, { documentId: d.id }), 'documentId', 'immutable');
      invalid(await H().patch(`/files/${f.id}`, { size: 999 }), 'size', 'immutable');
      const same = ok(await H().patch(`/files/${f.id}`, { projectId: p.id, taskId: t.id, name: ' renamed.txt ' }));
      expect(same).toMatchObject({ name: 'renamed.txt', projectId: p.id, taskId: t.id });
      problem(await H().patch(`/files/${f.id}`, {}), 400, 'empty_update');
      invalid(await H().patch(`/files/${f.id}`, { name: ' ' }), 'name');
    });
  });

  describe(`[${factory.name}] v3 Files: url, download and thumbnail links (docs/not-shown.md "url, download, thumbnail")`, () => {
    const H = perDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Links P' });
    });

    it('`url` serves the bytes inline under the file\'s name, `download` as an attachment, both byte-identical; thumbnail is null before processing', async () => {
      const data = Uint8Array.from({ length: 256 }, (_, i) => i);
      const f = ok(await H().upload(data, { name: 'all bytes.txt', projectId: p.id }), 201);
      expect(f.processed).toBe(false);
      expect(f.thumbnail).toBeNull();
      const inline = await H().fetchLink('GET', f.url);
      expect(inline.status).toBe(200);
      sameBytes(bytesOf(inline), data);
      expect(inline.headers['content-disposition']).toMatch(/^inline; filename="all bytes\.txt"/);
      const attached = await H().fetchLink('GET', f.download);
      expect(attached.status).toBe(200);
      sameBytes(bytesOf(attached), data);
      expect(attached.headers['content-disposition']).toMatch(/^attachment; filename="all bytes\.txt"/);
      // The links need no Authorization header; HEAD answers no body.
      const head = await H().fetchLink('HEAD', f.url);
      expect(head.status).toBe(200);
      expect(head.body).toBeUndefined();
    });

    it('SVG and HTML are served as application/octet-stream attachments with nosniff, even through `url`; a PNG is image/png inline', async () => {
      const png = ok(await H().upload(makePng(4, 4), { name: 'dot.png', projectId: p.id }), 201);
      const r = await H().fetchLink('GET', png.url);
      expect(r.headers['content-type']).toBe('image/png');
      expect(r.headers['content-disposition']).toMatch(/^inline;/);
      for (const name of ['drawing.svg', 'page.html']) {
        const f = ok(await H().upload('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', { name, projectId: p.id }), 201);
        const got = await H().fetchLink('GET', f.url);
        expect(got.status).toBe(200);
        expect({ name, type: got.headers['content-type'], nosniff: got.headers['x-content-type-options'] }).toEqual({ name, type: 'application/octet-stream', nosniff: 'nosniff' });
        expect(got.headers['content-disposition'], name).toMatch(/^attachment;/);
      }
    });

    it('links work for at least one hour and expire within two (3 h later: 403 link_expired); a fresh read gives working links; a tampered link is 403 link_invalid; PUT to a download link is 403 link_invalid', async () => {
      const data = new TextEncoder().encode('expiring');
      const f = ok(await H().upload(data, { name: 'exp.txt', projectId: p.id }), 201);
      H().clock.advance(HOUR - 1000);
      expect((await H().fetchLink('GET', f.url)).status).toBe(200);
      H().clock.advance(2 * HOUR + 1000);
      linkProblem(await H().fetchLink('GET', f.url), 403, 'link_expired');
      linkProblem(await H().fetchLink('GET', f.download), 403, 'link_expired');
      const again = ok(await H().get(`/files/${f.id}`));
      const r = await H().fetchLink('GET', again.url);
      expect(r.status).toBe(200);
      sameBytes(bytesOf(r), data);

      const u = new URL(again.url, 'http://x.invalid');
      u.searchParams.set('disp', 'attachment');
      linkProblem(await H().fetchLink('GET', `${u.pathname}${u.search}`), 403, 'link_invalid');
      linkProblem(await H().fetchLink('PUT', again.url, new Uint8Array([1])), 403, 'link_invalid');
    });
  });

  describe(`[${factory.name}] v3 Files: post-processing with a thumbnailer (docs/not-shown.md "Post-processing")`, () => {
    const H = perDescribe(factory, () => ({ files: { store: createMemoryBlobStore(), thumbnailer: createSharpThumbnailer() } }));
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Thumbs P' });
    });

    it('a PNG: processed false until the job runs; then processed true with a thumbnail (JPEG, at most 256×256) and file.updated triggered by the system', async () => {
      const png = makePng(640, 480);
      expect(imageInfo(png)).toEqual({ format: 'png', width: 640, height: 480 });
      const f = ok(await H().upload(png, { name: 'photo.png', projectId: p.id }), 201);
      expect(f).toMatchObject({ processed: false, thumbnail: null });
      expect(ids(await H().get(`/files?projectId[eq]=${p.id}&processed[eq]=false`))).toContain(f.id);
      const { events } = await during(H(), () => drainJobs(H()));
      const after = ok(await H().get(`/files/${f.id}`));
      expect(after.processed).toBe(true);
      expect(typeof after.thumbnail).toBe('string');
      expect(ids(await H().get(`/files?projectId[eq]=${p.id}&processed[eq]=true`))).toContain(f.id);
      expect(ids(await H().get(`/files?projectId[eq]=${p.id}&processed[eq]=false`))).not.toContain(f.id);

      const [ev] = ofType(events, 'file.updated', f.id);
      expect(ev, JSON.stringify(events.map((e) => e.type))).toBeDefined();
      expect(ev.triggeredBy.source).toBe('system');
      expect(ev.payload.file).toMatchObject({ id: f.id, processed: true });
      expect(typeof ev.payload.file.thumbnail).toBe('string');

      const thumb = await H().fetchLink('GET', after.thumbnail);
      expect(thumb.status).toBe(200);
      const info = imageInfo(bytesOf(thumb));
      expect(info?.format).toBe('jpeg');
      expect(info!.width).toBeLessThanOrEqual(THUMBNAIL_MAX_PX);
      expect(info!.height).toBeLessThanOrEqual(THUMBNAIL_MAX_PX);
      expect(info).toEqual({ format: 'jpeg', width: 256, height: 192 });
      // The original is untouched.
      sameBytes(bytesOf(await H().fetchLink('GET', after.url)), png);
    });

    it('a PNG with transparency gets a PNG thumbnail', async () => {
      const f = ok(await H().upload(makePng(300, 600, true), { name: 'logo.png', projectId: p.id }), 201);
      await drainJobs(H());
      const after = ok(await H().get(`/files/${f.id}`));
      const info = imageInfo(bytesOf(await H().fetchLink('GET', after.thumbnail)));
      expect(info).toEqual({ format: 'png', width: 128, height: 256 });
    });

    it('a text file, and a file named .png that is no image, are processed without a thumbnail', async () => {
      const txt = ok(await H().upload('just text', { name: 'readme.txt', projectId: p.id }), 201);
      const fake = ok(await H().upload('<svg xmlns="http://www.w3.org/2000/svg"/>', { name: 'fake.png', projectId: p.id }), 201);
      await drainJobs(H());
      expect(ok(await H().get(`/files/${txt.id}`))).toMatchObject({ processed: true, thumbnail: null });
      expect(ok(await H().get(`/files/${fake.id}`))).toMatchObject({ processed: true, thumbnail: null });
    });
  });

  describe(`[${factory.name}] v3 Files: post-processing without a thumbnailer`, () => {
    const H = perDescribe(factory);

    it('an image is processed (file.updated) and its thumbnail stays null', async () => {
      const p = await H().project({ name: 'No thumbs' });
      const f = ok(await H().upload(makePng(64, 64), { name: 'small.png', projectId: p.id }), 201);
      const { events } = await during(H(), () => drainJobs(H()));
      expect(ok(await H().get(`/files/${f.id}`))).toMatchObject({ processed: true, thumbnail: null });
      expect(ofType(events, 'file.updated', f.id)).toHaveLength(1);
    });
  });

  describe(`[${factory.name}] v3 Files: storage quota (spec "File": size must fit the team's remaining quota; docs/not-shown.md "Storage quota")`, () => {
    const H = perDescribe(factory);
    const QUOTA = 100;
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Quota P' });
      await H().api.admin.setWorkspaceSettings(H().a.id, { storageQuotaBytes: QUOTA });
    });

    // Upload URLs handed out count until registered or expired (24 h): each test lets its own expire at the end.
    const forgetPending = () => H().clock.advance(UPLOAD_KEY_TTL_MS + 1000);

    it('an upload URL for more than what is left is 400 storage_quota_exceeded on size with quotaBytes and usedBytes; pending upload URLs count until registered or expired', async () => {
      const r = await H().post('/files/upload-url', { size: QUOTA + 1 });
      invalid(r, 'size', 'storage_quota_exceeded');
      expect(r.body).toMatchObject({ quotaBytes: QUOTA, usedBytes: 0 });
      ok(await H().post('/files/upload-url', { size: QUOTA }));
      const pending = await H().post('/files/upload-url', { size: 1 });
      invalid(pending, 'size', 'storage_quota_exceeded');
      expect(pending.body).toMatchObject({ usedBytes: QUOTA });
      // Another workspace keeps the default quota.
      ok(await H().post('/files/upload-url', { size: QUOTA + 1 }, { token: H().b.owner.token }));
      forgetPending();
      ok(await H().post('/files/upload-url', { size: QUOTA }));
      forgetPending();
    });

    it('files use the quota; trashed files still count; purged files free their bytes', async () => {
      const f = ok(await H().upload(new Uint8Array(60), { name: 'sixty.bin', projectId: p.id }), 201);
      const over = await H().post('/files/upload-url', { size: 41 });
      invalid(over, 'size', 'storage_quota_exceeded');
      expect(over.body).toMatchObject({ quotaBytes: QUOTA, usedBytes: 60 });
      ok(await H().post('/files/upload-url', { size: 40 }));
      forgetPending();

      ok(await H().del(`/files/${f.id}`), 204);
      const stillOver = await H().post('/files/upload-url', { size: 41 });
      invalid(stillOver, 'size', 'storage_quota_exceeded');
      expect(stillOver.body).toMatchObject({ usedBytes: 60 });

      H().clock.advance(RETENTION_MS + DAY);
      await H().api.jobs.purge();
      ok(await H().post('/files/upload-url', { size: QUOTA }));
      forgetPending();
    });

    it('the quota is checked again when the upload is registered (the workspace\'s quota may have shrunk meanwhile); the upload itself is not counted twice', async () => {
      const a = ok(await H().post('/files/upload-url', { size: 70 }));
      await H().fetchLink('PUT', a.url, new Uint8Array(70));
      await H().api.admin.setWorkspaceSettings(H().a.id, { storageQuotaBytes: 50 });
      invalid(await H().post('/files', { uploadKey: a.uploadKey, name: 'a.bin', size: 70, projectId: p.id }), 'size', 'storage_quota_exceeded');
      await H().api.admin.setWorkspaceSettings(H().a.id, { storageQuotaBytes: QUOTA });
      // 70 pending + 70 for the file would be 140: registering moves the bytes from pending to the file.
      const first = ok(await H().post('/files', { uploadKey: a.uploadKey, name: 'a.bin', size: 70, projectId: p.id }), 201);
      ok(await H().post('/files/upload-url', { size: 30 }));
      invalid(await H().post('/files/upload-url', { size: 1 }), 'size', 'storage_quota_exceeded');
      ok(await H().del(`/files/${first.id}`), 204);
      H().clock.advance(RETENTION_MS + DAY);
      await H().api.jobs.purge();
    });

    it('quota checks are serialised: upload URLs asked for at once that each fit but not together → exactly one 200, one storage_quota_exceeded', async () => {
      const both = await Promise.all([H().post('/files/upload-url', { size: 60 }), H().post('/files/upload-url', { size: 60 })]);
      expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
      invalid(both.find((r) => r.status === 400)!, 'size', 'storage_quota_exceeded');
      forgetPending();
    });

    it('create from content over the quota is 400 storage_quota_exceeded on content, with quotaBytes and usedBytes', async () => {
      const r = await H().post('/files/from-content', { name: 'big.txt', content: 'x'.repeat(QUOTA + 1), projectId: p.id });
      invalid(r, 'content', 'storage_quota_exceeded');
      expect(ok(await H().post('/files/from-content', { name: 'fits.txt', content: 'x'.repeat(QUOTA), projectId: p.id }), 201).size).toBe(QUOTA);
      expect(r.body).toMatchObject({ quotaBytes: QUOTA, usedBytes: 0 });
    });
  });

  describe(`[${factory.name}] v3 Files: create from content (docs/not-shown.md "Create from content and upload from URL")`, () => {
    const H = perDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Content P' });
    });

    it('utf8 content → 201 with the byte size; the bytes download identical; only file.createFromContent is emitted, with the response', async () => {
      const text = 'héllo wörld ✓\n';
      const { result, events } = await during(H(), () => H().post('/files/from-content', { name: ' hello.txt ', content: text, projectId: p.id }));
      const f = ok(result, 201);
      const bytes = new TextEncoder().encode(text);
      expect(f).toMatchObject({ name: 'hello.txt', size: bytes.byteLength, projectId: p.id, processed: false, thumbnail: null, uploaderId: H().a.owner.id });
      sameBytes(bytesOf(await H().fetchLink('GET', f.url)), bytes);
      expect(events.map((e) => e.type)).toEqual(['file.createFromContent']);
      expect(events[0].payload.file).toEqual(f);
      expect(events[0].aggregateId).toBe(f.id);
    });

    it('base64 content decodes to the exact bytes; explicit utf8 works too', async () => {
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      const f = ok(await H().post('/files/from-content', { name: 'bin.dat', content: Buffer.from(all).toString('base64'), encoding: 'base64', projectId: p.id }), 201);
      expect(f.size).toBe(256);
      sameBytes(bytesOf(await H().fetchLink('GET', f.download)), all);
      const u = ok(await H().post('/files/from-content', { name: 'u.txt', content: 'plain', encoding: 'utf8', projectId: p.id }), 201);
      expect(u.size).toBe(5);
    });

    it('the body is validated exactly: bad base64 → invalid_base64, unknown keys → unrecognized_key, missing name, no place → context_required, bad encoding', async () => {
      invalid(await H().post('/files/from-content', { name: 'b.bin', content: 'not base64!*', encoding: 'base64', projectId: p.id }), 'content', 'invalid_base64');
      invalid(await H().post('/files/from-content', { name: 'b.txt', content: 'x', projectId: p.id, size: 1 }), 'size', 'unrecognized_key');
      invalid(await H().post('/files/from-content', { content: 'x', projectId: p.id }), 'name');
      invalid(await H().post('/files/from-content', { name: ' ', content: 'x', projectId: p.id }), 'name');
      invalid(await H().post('/files/from-content', { name: 'n'.repeat(FILE_NAME_MAX + 1), content: 'x', projectId: p.id }), 'name');
      invalid(await H().post('/files/from-content', { name: 'x.txt', content: 'x' }), 'projectId', 'context_required');
      invalid(await H().post('/files/from-content', { name: 'x.txt', content: 'x', encoding: 'hex', projectId: p.id }), 'encoding');
      // Nothing was registered by the refusals.
      expect(ok(await H().get(`/files?projectId[eq]=${p.id}&name[eq]=b.bin`)).data).toEqual([]);
    });

    it('upload from URL without a configured fetcher is 503 service_unavailable', async () => {
      problem(await H().post('/files/from-url', { url: 'https://example.com/a.png', projectId: p.id }), 503, 'service_unavailable');
    });
  });

  describe(`[${factory.name}] v3 Files: upload from URL (docs/not-shown.md "Create from content and upload from URL")`, () => {
    const FROM_URL_MAX = 1000;
    const served = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) % 256);
    let server: Server;
    let origin = '';
    const fetcher = createUrlFetcher({ allowPrivateTargets: true });
    beforeAll(async () => {
      server = createServer((req, res) => {
        if (req.url === '/files/report%20final.pdf' || req.url === '/files/data.bin') {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(served.byteLength) });
          res.end(Buffer.from(served));
        } else if (req.url === '/big.bin') {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end(Buffer.alloc(FROM_URL_MAX * 3, 1));
        } else if (req.url === '/moved') {
          res.writeHead(302, { location: '/files/data.bin' });
          res.end();
        } else {
          res.writeHead(404);
          res.end('nope');
        }
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await fetcher.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const H = perDescribe(factory, () => ({ files: { store: createMemoryBlobStore(), fetcher, fromUrlMaxBytes: FROM_URL_MAX } }));
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'From URL P' });
    });

    it('fetches the target → 201, name from the URL\'s last segment (decoded), bytes identical; only file.uploadFromUrl is emitted', async () => {
      const { result, events } = await during(H(), () => H().post('/files/from-url', { url: `${origin}/files/report%20final.pdf`, projectId: p.id }));
      const f = ok(result, 201);
      expect(f).toMatchObject({ name: 'report final.pdf', size: served.byteLength, projectId: p.id, uploaderId: H().a.owner.id });
      sameBytes(bytesOf(await H().fetchLink('GET', f.url)), served);
      expect(events.map((e) => e.type)).toEqual(['file.uploadFromUrl']);
      expect(events[0].payload.file).toEqual(f);
      const named = ok(await H().post('/files/from-url', { url: `${origin}/files/data.bin`, name: ' custom.bin ', projectId: p.id }), 201);
      expect(named.name).toBe('custom.bin');
    });

    it('a non-2xx target → 400 bad_status on url (redirects are not followed); a target over fromUrlMaxBytes → too_big; nothing is registered', async () => {
      invalid(await H().post('/files/from-url', { url: `${origin}/missing.png`, projectId: p.id }), 'url', 'bad_status');
      invalid(await H().post('/files/from-url', { url: `${origin}/moved`, projectId: p.id }), 'url', 'bad_status');
      invalid(await H().post('/files/from-url', { url: `${origin}/big.bin`, projectId: p.id }), 'url', 'too_big');
      const names = ok(await H().get(`/files?projectId[eq]=${p.id}&limit=200`)).data.map((x: any) => x.name);
      for (const n of ['missing.png', 'moved', 'big.bin']) expect(names).not.toContain(n);
    });

    it('the body is validated exactly: http(s) URLs only, unknown keys refused, a place required', async () => {
      invalid(await H().post('/files/from-url', { url: 'ftp://127.0.0.1/a.txt', projectId: p.id }), 'url');
      invalid(await H().post('/files/from-url', { url: `${origin}/files/data.bin`, projectId: p.id, size: 3 }), 'size', 'unrecognized_key');
      invalid(await H().post('/files/from-url', { url: `${origin}/files/data.bin` }), 'projectId', 'context_required');
    });
  });

  describe(`[${factory.name}] v3 Files: upload from URL with the default (SSRF-safe) fetcher policy`, () => {
    let server: Server;
    let origin = '';
    let requests = 0;
    const fetcher = createUrlFetcher();
    beforeAll(async () => {
      server = createServer((_req, res) => {
        requests++;
        res.end('should never be read');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await fetcher.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const H = perDescribe(factory, () => ({ files: { store: createMemoryBlobStore(), fetcher } }));

    it('a loopback target is 400 refused_target on url and the target never sees a request', async () => {
      const p = await H().project({ name: 'SSRF P' });
      invalid(await H().post('/files/from-url', { url: `${origin}/secret.txt`, projectId: p.id }), 'url', 'refused_target');
      invalid(await H().post('/files/from-url', { url: `http://[::1]:${new URL(origin).port}/x`, projectId: p.id }), 'url', 'refused_target');
      expect(requests).toBe(0);
      expect(ok(await H().get(`/files?projectId[eq]=${p.id}`)).data).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Files: soft delete, restore and purge (spec "States and transitions"; docs/not-shown.md "Deleting files")`, () => {
    const blobs: BlobStore = createMemoryBlobStore();
    // Links that outlive the retention period, so the same link can be tried after the purge.
    const H = perDescribe(factory, () => ({ files: { store: blobs, thumbnailer: createSharpThumbnailer(), downloadTtlSeconds: 90 * 24 * 3600 } }));
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Trash P' });
    });

    it('DELETE → 204 (file.removed): gone from GET and lists, listed with purgeAt[notNull] (purgeAt = +30 days, deletedById); restore → 200 (file.restored) and back in lists', async () => {
      const f = ok(await H().upload('bye', { name: 'bye.txt', projectId: p.id }), 201);
      const del = await during(H(), () => H().del(`/files/${f.id}`));
      ok(del.result, 204);
      expect(ofType(del.events, 'file.removed', f.id)).toHaveLength(1);
      problem(await H().get(`/files/${f.id}`), 404, 'resource_not_found');
      expect(ids(await H().get(`/files?projectId[eq]=${p.id}`))).not.toContain(f.id);
      const trashed = ok(await H().get(`/files?projectId[eq]=${p.id}&purgeAt[notNull]=true`)).data.find((x: any) => x.id === f.id);
      expect(trashed).toMatchObject({ deletedById: H().a.owner.id });
      expect(Date.parse(trashed.purgeAt)).toBe(H().clock.now() + RETENTION_MS);
      // Bytes stay while the file is in the trash.
      expect((await H().fetchLink('GET', f.url)).status).toBe(200);

      const back = await during(H(), () => H().post(`/files/${f.id}/restore`));
      expect(ok(back.result)).toMatchObject({ id: f.id, purgeAt: null });
      expect(ofType(back.events, 'file.restored', f.id)).toHaveLength(1);
      expect(ids(await H().get(`/files?projectId[eq]=${p.id}`))).toContain(f.id);
      // Restoring a live file succeeds and changes nothing.
      expect(ok(await H().post(`/files/${f.id}/restore`)).purgeAt).toBeNull();
    });

    it('30 days after deletion the purge destroys the file (file.force_deleted), its annotations (annotation.removed) and their comments; the bytes and the thumbnail go through the job queue', async () => {
      const f = ok(await H().upload(makePng(400, 300), { name: 'doomed.png', projectId: p.id }), 201);
      await drainJobs(H());
      const live = ok(await H().get(`/files/${f.id}`));
      expect(typeof live.thumbnail).toBe('string');
      const ann = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'POINT', x: 5, y: 5 } }), 201);
      const comment = ok(await H().post('/messages', { annotationId: ann.id, text: 'Fix this corner' }), 201);
      expect(await blobs.size(keyOfLink(live.url))).toBe(live.size);
      expect(await blobs.size(keyOfLink(live.thumbnail))).toBeGreaterThan(0);

      ok(await H().del(`/files/${f.id}`), 204);
      H().clock.advance(RETENTION_MS - HOUR);
      await H().api.jobs.purge();
      expect(ok(await H().get(`/files?projectId[eq]=${p.id}&purgeAt[notNull]=true`)).data.map((x: any) => x.id)).toContain(f.id);

      H().clock.advance(2 * HOUR);
      const { events } = await during(H(), () => H().api.jobs.purge());
      const [gone] = ofType(events, 'file.force_deleted', f.id);
      expect(gone?.payload.file.id).toBe(f.id);
      expect(ofType(events, 'annotation.removed', ann.id)).toHaveLength(1);
      problem(await H().get(`/files/${f.id}`), 404, 'resource_not_found');
      expect(ok(await H().get(`/files?projectId[eq]=${p.id}&purgeAt[notNull]=true`)).data.map((x: any) => x.id)).not.toContain(f.id);
      problem(await H().get(`/annotations/${ann.id}`), 404, 'resource_not_found');
      problem(await H().get(`/messages/${comment.id}`), 404, 'resource_not_found');

      await drainJobs(H());
      expect(await blobs.size(keyOfLink(live.url))).toBeUndefined();
      expect(await blobs.size(keyOfLink(live.thumbnail))).toBeUndefined();
      // The old (still unexpired) links now find nothing.
      linkProblem(await H().fetchLink('GET', live.url), 404, 'resource_not_found');
      linkProblem(await H().fetchLink('GET', live.thumbnail), 404, 'resource_not_found');
    });

    it('an upload key never registered expires after 24 hours and api.jobs.purge() removes its bytes', async () => {
      const s = ok(await H().post('/files/upload-url', { size: 3 }));
      await H().fetchLink('PUT', s.url, new Uint8Array([1, 2, 3]));
      const key = keyOfLink(s.url);
      expect(await blobs.size(key)).toBe(3);
      H().clock.advance(UPLOAD_KEY_TTL_MS + MINUTE);
      await H().api.jobs.purge();
      await drainJobs(H());
      expect(await blobs.size(key)).toBeUndefined();
    });

    it('files of a purged document go with it', async () => {
      const d = ok(await H().post('/documents', { title: 'Doomed doc', projectId: p.id }), 201);
      const f = ok(await H().upload('on doc', { name: 'doc.txt', documentId: d.id }), 201);
      ok(await H().del(`/documents/${d.id}`), 204);
      H().clock.advance(RETENTION_MS + DAY);
      const { events } = await during(H(), () => H().api.jobs.purge());
      expect(ofType(events, 'document.force_deleted', d.id)).toHaveLength(1);
      expect(events.filter((e) => e.aggregateId === f.id).map((e) => e.type)).toEqual(['file.removed']);
      problem(await H().get(`/files/${f.id}`), 404, 'resource_not_found');
      await drainJobs(H());
      expect(await blobs.size(keyOfLink(f.url))).toBeUndefined();
    });

    it('files of a destroyed task go with it (file.removed), bytes removed by the job queue', async () => {
      const t = await H().task(p.id, { name: 'Short-lived' });
      const f = ok(await H().upload('attached', { name: 'att.txt', taskId: t.id }), 201);
      const { result, events } = await during(H(), () => H().del(`/tasks/${t.id}`));
      ok(result, 204);
      expect(ofType(events, 'file.removed', f.id)).toHaveLength(1);
      problem(await H().get(`/files/${f.id}`), 404, 'resource_not_found');
      await drainJobs(H());
      expect(await blobs.size(keyOfLink(f.url))).toBeUndefined();
    });
  });

  describe(`[${factory.name}] v3 Files: access (project access, private documents, chat attachments, other workspaces)`, () => {
    const H = perDescribe(factory);
    let p: any;
    let outsider: { id: string; token: string };
    beforeAll(async () => {
      p = await H().project({ name: 'Access P', members: [H().a.owner.id, H().a.regular.id, H().a.client.id] });
      const m = await H().api.admin.addMember(H().a.id, { name: 'Alpha Outsider', role: 'regular' });
      const tok = await H().api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] });
      outsider = { id: m.id, token: tok.token };
    });

    it('a file of a limited project the caller is not in: 403 project_access_denied, never listed; uploading there is refused', async () => {
      const closed = await H().project({ name: 'Closed files', accessType: 'limited', members: [H().a.owner.id] });
      const f = ok(await H().upload('secret', { name: 'secret.txt', projectId: closed.id }), 201);
      problem(await H().get(`/files/${f.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');
      expect(ids(await H().get('/files?limit=200', { token: H().a.regular.token }))).not.toContain(f.id);
      expect(ids(await H().get('/files?limit=200'))).toContain(f.id);
      const r = await H().upload('in', { name: 'in.txt', projectId: closed.id }, H().a.regular.token);
      expect(r.status).toBe(403);
      const ann = await H().post('/annotations', { type: 'image', fileId: f.id }, { token: H().a.regular.token });
      expect([403, 404]).toContain(ann.status);
    });

    it('a file of another member\'s private document is 404 for everyone else (the owner too), never listed, and its annotations too', async () => {
      const priv = ok(await H().post('/documents', { title: 'Diary', projectId: p.id, accessType: 'private' }, { token: H().a.regular.token }), 201);
      const f = ok(await H().upload('mine', { name: 'mine.txt', documentId: priv.id }, H().a.regular.token), 201);
      expect(ok(await H().get(`/files/${f.id}`, { token: H().a.regular.token })).id).toBe(f.id);
      for (const token of [H().a.owner.token, H().a.client.token, outsider.token]) {
        problem(await H().get(`/files/${f.id}`, { token }), 404, 'resource_not_found');
        expect(ids(await H().get(`/files?projectId[eq]=${p.id}&limit=200`, { token }))).not.toContain(f.id);
      }
      problem(await H().patch(`/files/${f.id}`, { name: 'peek.txt' }), 404, 'resource_not_found');
      problem(await H().del(`/files/${f.id}`), 404, 'resource_not_found');
      // Others cannot upload onto the private document either.
      problem(await H().upload('x', { name: 'x.txt', documentId: priv.id }), 404, 'resource_not_found');
      problem(await H().post('/annotations', { type: 'image', fileId: f.id }), 404, 'resource_not_found');
      const ann = ok(await H().post('/annotations', { type: 'image', fileId: f.id }, { token: H().a.regular.token }), 201);
      problem(await H().get(`/annotations/${ann.id}`), 404, 'resource_not_found');
      expect(ids(await H().get(`/annotations?fileId[eq]=${f.id}`))).toEqual([]);
      expect(ids(await H().get(`/annotations?fileId[eq]=${f.id}`, { token: H().a.regular.token }))).toEqual([ann.id]);
    });

    it('a file attached to a group-chat message has projectId null and is 404 for non-members of the chat (the workspace owner included), with its annotations', async () => {
      const chat = ok(await H().post('/chats', { type: 'group', name: 'Design crew', memberIds: [H().a.regular.id] }, { token: H().a.regular.token }), 201);
      const msg = ok(await H().post('/messages', { chatId: chat.id, text: 'Mockups attached' }, { token: H().a.regular.token }), 201);
      const f = ok(await H().upload('mock', { name: 'mock.txt', messageId: msg.id }, H().a.regular.token), 201);
      expect(f).toMatchObject({ projectId: null, messageId: msg.id, folderStack: [] });
      expect(ok(await H().get(`/files/${f.id}`, { token: H().a.regular.token })).id).toBe(f.id);
      for (const token of [H().a.owner.token, outsider.token, H().a.client.token]) {
        problem(await H().get(`/files/${f.id}`, { token }), 404, 'resource_not_found');
        expect(ids(await H().get('/files?limit=200', { token }))).not.toContain(f.id);
      }
      problem(await H().post('/annotations', { type: 'image', fileId: f.id }, { token: outsider.token }), 404, 'resource_not_found');
      const ann = ok(await H().post('/annotations', { type: 'image', fileId: f.id }, { token: H().a.regular.token }), 201);
      problem(await H().get(`/annotations/${ann.id}`, { token: outsider.token }), 404, 'resource_not_found');
      // A non-member cannot attach a file to that message.
      problem(await H().upload('x', { name: 'x.txt', messageId: msg.id }, outsider.token), 404, 'resource_not_found');
    });

    it('another workspace sees nothing: GET, PATCH, DELETE, sub-routes and annotations are 404', async () => {
      const f = ok(await H().upload('ours', { name: 'ours.txt', projectId: p.id }), 201);
      const tok = { token: H().b.owner.token };
      problem(await H().get(`/files/${f.id}`, tok), 404, 'resource_not_found');
      problem(await H().patch(`/files/${f.id}`, { name: 'theirs.txt' }, tok), 404, 'resource_not_found');
      problem(await H().del(`/files/${f.id}`, tok), 404, 'resource_not_found');
      problem(await H().req('POST', `/files/${f.id}/subscribers`, { body: { ids: [H().b.owner.id] }, ...tok }), 404, 'resource_not_found');
      problem(await H().post('/annotations', { type: 'image', fileId: f.id }, tok), 404, 'resource_not_found');
      expect(ids(await H().get('/files?limit=200', tok))).not.toContain(f.id);
    });
  });

  describe(`[${factory.name}] v3 Files: labels and subscribers sub-routes (spec rule 12; events file.labels.*, file.subscribers.*)`, () => {
    const H = perDescribe(factory);
    let p: any;
    let f: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Subs P', members: [H().a.owner.id, H().a.regular.id] });
      f = ok(await H().upload('labelled', { name: 'l.txt', projectId: p.id }), 201);
    });

    it('POST/DELETE /files/{id}/labels {ids} add and remove labels with file.labels.added/removed (parentId, relatedId, relation)', async () => {
      const l1 = ok(await H().post('/labels', { name: 'Reviewed' }), 201);
      const l2 = ok(await H().post('/labels', { name: 'Final' }), 201);
      const add = await during(H(), () => H().post(`/files/${f.id}/labels`, { ids: [l1.id, l2.id] }));
      expect([...ok(add.result).labels].sort()).toEqual([l1.id, l2.id].sort());
      const added = ofType(add.events, 'file.labels.added', f.id);
      expect(added.map((e) => e.payload).sort((a, b) => (a.relatedId < b.relatedId ? -1 : 1))).toEqual(
        [l1.id, l2.id].sort().map((relatedId) => ({ parentId: f.id, relatedId, relation: 'labels' })),
      );
      expect(ok(await H().get(`/files/${f.id}?expand=labels`)).labels.map((x: any) => x.id).sort()).toEqual([l1.id, l2.id].sort());
      const rm = await during(H(), () => H().req('DELETE', `/files/${f.id}/labels`, { body: { ids: [l1.id] } }));
      expect(ok(rm.result).labels).toEqual([l2.id]);
      expect(ofType(rm.events, 'file.labels.removed', f.id).map((e) => e.payload)).toEqual([{ parentId: f.id, relatedId: l1.id, relation: 'labels' }]);
    });

    it('POST/DELETE /files/{id}/subscribers {ids} with file.subscribers.added/removed', async () => {
      const add = await during(H(), () => H().post(`/files/${f.id}/subscribers`, { ids: [H().a.regular.id] }));
      expect(ok(add.result).subscribers).toEqual([H().a.regular.id]);
      expect(ofType(add.events, 'file.subscribers.added', f.id).map((e) => e.payload)).toEqual([{ parentId: f.id, relatedId: H().a.regular.id, relation: 'subscribers' }]);
      const rm = await during(H(), () => H().req('DELETE', `/files/${f.id}/subscribers`, { body: { ids: [H().a.regular.id] } }));
      expect(ok(rm.result).subscribers).toEqual([]);
      expect(ofType(rm.events, 'file.subscribers.removed', f.id)).toHaveLength(1);
    });

    it('an unknown or other-workspace id rejects the whole request with 404 m2m_target_not_found (missing); unknown relation 400 m2m_relation_unknown; empty ids batch_empty', async () => {
      const l = ok(await H().post('/labels', { name: 'Partial' }), 201);
      const r = problem(await H().post(`/files/${f.id}/labels`, { ids: [l.id, 'nosuchlabel1'] }), 404, 'm2m_target_not_found');
      expect(r.missing).toEqual(['nosuchlabel1']);
      expect(ok(await H().get(`/files/${f.id}`)).labels).not.toContain(l.id);
      const bl = ok(await H().post('/labels', { name: 'B label' }, { token: H().b.owner.token }), 201);
      problem(await H().post(`/files/${f.id}/labels`, { ids: [bl.id] }), 404, 'm2m_target_not_found');
      problem(await H().post(`/files/${f.id}/subscribers`, { ids: [H().b.owner.id] }), 404, 'm2m_target_not_found');
      problem(await H().post(`/files/${f.id}/watchers`, { ids: [H().a.regular.id] }), 400, 'm2m_relation_unknown');
      problem(await H().post(`/files/${f.id}/labels`, { ids: [] }), 400, 'batch_empty');
      problem(await H().post('/files/nosuchfile1/labels', { ids: [l.id] }), 404, 'resource_not_found');
    });
  });

  describe(`[${factory.name}] v3 Files: filters, sort and expand (spec "File")`, () => {
    const H = perDescribe(factory);
    let p: any;
    let q: any;
    let t: any;
    let folder: any;
    let f1: any;
    let f2: any;
    let f3: any;
    let f4: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Filter P', members: [H().a.owner.id, H().a.regular.id] });
      q = await H().project({ name: 'Filter Q' });
      t = await H().task(p.id, { name: 'Filter task' });
      folder = ok(await H().post('/document-folders', { name: 'Filter folder', projectId: p.id }), 201);
      f1 = ok(await H().upload('1', { name: 'alpha.txt', projectId: p.id }), 201);
      H().clock.advance(1000);
      f2 = ok(await H().upload('22', { name: 'beta.png', taskId: t.id }), 201);
      H().clock.advance(1000);
      f3 = ok(await H().upload('333', { name: 'Alpha notes.md', folderId: folder.id }), 201);
      H().clock.advance(1000);
      f4 = ok(await H().upload('4444', { name: 'gamma.txt', projectId: p.id }, H().a.regular.token), 201);
      H().clock.advance(1000);
      ok(await H().upload('q', { name: 'alpha-q.txt', projectId: q.id }), 201);
    });

    it('default sort is -createdAt; projectId[eq] narrows to the project', async () => {
      expect(ids(await H().get(`/files?projectId[eq]=${p.id}`))).toEqual([f4.id, f3.id, f2.id, f1.id]);
      expect(ids(await H().get(`/files?projectId[eq]=${p.id}&sort=createdAt`))).toEqual([f1.id, f2.id, f3.id, f4.id]);
      expect(ids(await H().get(`/files?projectId[in]=${p.id},${q.id}`))).toHaveLength(5);
    });

    it('name[eq|contains|startsWith] (case-insensitive), taskId, folderId, uploaderId, processed, purgeAt', async () => {
      const inP = `projectId[eq]=${p.id}`;
      expect(ids(await H().get(`/files?${inP}&name[eq]=alpha.txt`))).toEqual([f1.id]);
      expect(ids(await H().get(`/files?${inP}&name[contains]=ALPHA`))).toEqual([f3.id, f1.id]);
      expect(ids(await H().get(`/files?${inP}&name[startsWith]=be`))).toEqual([f2.id]);
      expect(ids(await H().get(`/files?taskId[eq]=${t.id}`))).toEqual([f2.id]);
      expect(ids(await H().get(`/files?folderId[eq]=${folder.id}`))).toEqual([f3.id]);
      expect(ids(await H().get(`/files?${inP}&uploaderId[eq]=${H().a.regular.id}`))).toEqual([f4.id]);
      expect(ids(await H().get(`/files?${inP}&uploaderId[in]=${H().a.owner.id}`))).toEqual([f3.id, f2.id, f1.id]);
      expect(ids(await H().get(`/files?${inP}&processed[eq]=false`))).toEqual([f4.id, f3.id, f2.id, f1.id]);
      expect(ids(await H().get(`/files?${inP}&processed[eq]=true`))).toEqual([]);
      expect(ids(await H().get(`/files?${inP}&purgeAt[null]=true`))).toEqual([f4.id, f3.id, f2.id, f1.id]);
      expect(ids(await H().get(`/files?${inP}&purgeAt[notNull]=true`))).toEqual([]);
      problem(await H().get(`/files?${inP}&size[eq]=1`), 400, 'invalid_query_param');
      problem(await H().get(`/files?${inP}&processed[gt]=false`), 400, 'invalid_query_param');
    });

    it('expand uploader, task, folder, project and annotations', async () => {
      const ann = ok(await H().post('/annotations', { type: 'image', fileId: f2.id, position: { shape: 'POINT', x: 1, y: 2 } }), 201);
      const two = ok(await H().get(`/files/${f2.id}?expand=uploader,task,annotations,project`));
      expect(two.uploader).toMatchObject({ id: H().a.owner.id });
      expect(two.task).toMatchObject({ id: t.id, name: 'Filter task' });
      expect(two.project).toMatchObject({ id: p.id });
      expect(two.annotations.map((a: any) => a.id)).toEqual([ann.id]);
      expect(two.annotations[0]).toMatchObject({ fileId: f2.id, position: { shape: 'POINT', x: 1, y: 2 } });
      const three = ok(await H().get(`/files/${f3.id}?expand=folder`));
      expect(three.folder).toMatchObject({ id: folder.id, name: 'Filter folder' });
      const listed = ok(await H().get(`/files?projectId[eq]=${p.id}&expand=uploader`)).data;
      expect(listed.find((x: any) => x.id === f4.id).uploader).toMatchObject({ id: H().a.regular.id });
      problem(await H().get(`/files/${f1.id}?expand=owner`), 400, 'expand_unknown_relation');
    });

    it('every expand target the spec lists for files answers (objects, null, or arrays), and so do the annotation ones', async () => {
      for (const rel of FILE_EXPANDS) {
        const r = await H().get(`/files/${f2.id}?expand=${rel}`);
        expect({ rel, status: r.status, code: r.body?.code }).toEqual({ rel, status: 200, code: undefined });
        expect(r.body, rel).toHaveProperty(rel);
      }
      const two = ok(await H().get(`/files/${f2.id}?expand=${FILE_EXPANDS.join(',')}`));
      expect(two).toMatchObject({ deletedBy: null, document: null, message: null, annotationTask: null, labels: [], subscribers: [] });
      expect(two.createdByActor).toMatchObject({ type: 'human', memberId: H().a.owner.id });
      const ann = ok(await H().post('/annotations', { type: 'image', fileId: f3.id }), 201);
      for (const rel of ANNOTATION_EXPANDS) {
        const r = await H().get(`/annotations/${ann.id}?expand=${rel}`);
        expect({ rel, status: r.status, code: r.body?.code }).toEqual({ rel, status: 200, code: undefined });
        expect(r.body, rel).toHaveProperty(rel);
      }
      const a = ok(await H().get(`/annotations/${ann.id}?expand=file,messages,task`));
      expect(a.file).toMatchObject({ id: f3.id, name: 'Alpha notes.md' });
      expect(a).toMatchObject({ messages: [], task: null });
    });
  });

  describe(`[${factory.name}] v3 Annotations (spec "Annotation"; docs/not-shown.md "Annotation fields", "Annotation threads")`, () => {
    const H = perDescribe(factory);
    let p: any;
    let f: any;
    let g: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Annot P', members: [H().a.owner.id, H().a.regular.id, H().a.client.id] });
      f = ok(await H().upload(makePng(20, 10), { name: 'screen.png', projectId: p.id }), 201);
      g = ok(await H().upload('video bytes', { name: 'clip.mp4', projectId: p.id }), 201);
    });
    const create = async (body: Record<string, unknown>, token?: string) => ok(await H().post('/annotations', { type: 'image', fileId: f.id, ...body }, { token }), 201);

    it('POST /annotations → 201: position {} (bare anchor) and videoTimeSeconds null by default, taskId null; annotation.created carries the response', async () => {
      const { result, events } = await during(H(), () => H().post('/annotations', { type: 'image', fileId: f.id }));
      const a = ok(result, 201);
      expect(a).toMatchObject({ type: 'image', fileId: f.id, position: {}, videoTimeSeconds: null, taskId: null });
      const [ev] = ofType(events, 'annotation.created', a.id);
      expect(ev.payload.annotation).toEqual(a);
      expect(ev.projectId).toBe(p.id);
      expect(ok(await H().get(`/annotations/${a.id}`))).toEqual(a);
      expect(a).not.toHaveProperty('purgeAt');
    });

    it('type (image|video) and fileId are required; unknown fileId is 404; a client (guest) reads but does not write annotations', async () => {
      invalid(await H().post('/annotations', { fileId: f.id }), 'type', 'required');
      invalid(await H().post('/annotations', { type: 'audio', fileId: f.id }), 'type');
      invalid(await H().post('/annotations', { type: 'image' }), 'fileId', 'required');
      problem(await H().post('/annotations', { type: 'image', fileId: 'nosuchfile1' }), 404, 'resource_not_found');
      const v = await create({ type: 'video', fileId: g.id, videoTimeSeconds: 12.5 });
      expect(v).toMatchObject({ type: 'video', fileId: g.id, videoTimeSeconds: 12.5 });
      problem(await H().post('/annotations', { type: 'image', fileId: f.id }, { token: H().a.client.token }), 403, 'permission_denied');
      expect(ok(await H().get(`/annotations/${v.id}`, { token: H().a.client.token })).id).toBe(v.id);
    });

    it('position: POINT {x,y}; RECTANGLE and OVAL {x,y,width,height} up to the edges; values are percentages 0-100', async () => {
      expect((await create({ position: { shape: 'POINT', x: 0, y: 100 } })).position).toEqual({ shape: 'POINT', x: 0, y: 100 });
      expect((await create({ position: { shape: 'RECTANGLE', x: 10, y: 20, width: 90, height: 80 } })).position).toEqual({ shape: 'RECTANGLE', x: 10, y: 20, width: 90, height: 80 });
      expect((await create({ position: { shape: 'OVAL', x: 12.5, y: 0, width: 50, height: 100 } })).position).toEqual({ shape: 'OVAL', x: 12.5, y: 0, width: 50, height: 100 });
      expect((await create({ position: {} })).position).toEqual({});
    });

    it('position refusals: outside 0-100, past the right or bottom edge (out_of_bounds), POINT with width (strict), a missing size, an unknown shape or key, not an object', async () => {
      invalidUnder(await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'POINT', x: 101, y: 5 } }), 'position');
      invalidUnder(await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'POINT', x: -1, y: 5 } }), 'position');
      invalidUnder(await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'POINT', x: 1, y: 1, width: 5 } }), 'position');
      invalidUnder(await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'RECTANGLE', x: 1, y: 1, width: 5 } }), 'position');
      invalidUnder(await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'TRIANGLE', x: 1, y: 1 } }), 'position');
      invalidUnder(await H().post('/annotations', { type: 'image', fileId: f.id, position: { x: 1, y: 1 } }), 'position');
      invalidUnder(await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'POINT', x: '1', y: 1 } }), 'position');
      invalidUnder(await H().post('/annotations', { type: 'image', fileId: f.id, position: 'POINT' }), 'position');
      invalidUnder(await H().post('/annotations', { type: 'image', fileId: f.id, position: { note: 'x' } }), 'position');
      // Past the right or bottom edge: refused, with the code docs/not-shown.md names.
      const right = await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'RECTANGLE', x: 50, y: 0, width: 51, height: 10 } });
      const bottom = await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'OVAL', x: 0, y: 60, width: 10, height: 41 } });
      invalidUnder(right, 'position');
      invalidUnder(bottom, 'position');
      invalidUnder(right, 'position', 'out_of_bounds');
      invalidUnder(bottom, 'position', 'out_of_bounds');
    });

    it('videoTimeSeconds is ≥ 0 or null', async () => {
      invalid(await H().post('/annotations', { type: 'video', fileId: g.id, videoTimeSeconds: -0.5 }), 'videoTimeSeconds');
      invalid(await H().post('/annotations', { type: 'video', fileId: g.id, videoTimeSeconds: '3' }), 'videoTimeSeconds');
      expect((await create({ type: 'video', fileId: g.id, videoTimeSeconds: 0 })).videoTimeSeconds).toBe(0);
      expect((await create({ type: 'video', fileId: g.id, videoTimeSeconds: null })).videoTimeSeconds).toBeNull();
    });

    it('update body: position, videoTimeSeconds, expectedUpdatedAt (stale → 409 stale_write); type and fileId are immutable; empty PATCH is empty_update; annotation.updated carries the result', async () => {
      const a = await create({ type: 'video', fileId: g.id, videoTimeSeconds: 1 });
      H().clock.advance(1000);
      const { result, events } = await during(H(), () => H().patch(`/annotations/${a.id}`, { position: { shape: 'POINT', x: 50, y: 50 }, videoTimeSeconds: 2, expectedUpdatedAt: a.updatedAt }));
      const u = ok(result);
      expect(u).toMatchObject({ position: { shape: 'POINT', x: 50, y: 50 }, videoTimeSeconds: 2 });
      expect(ofType(events, 'annotation.updated', a.id)[0].payload.annotation).toEqual(u);
      problem(await H().patch(`/annotations/${a.id}`, { videoTimeSeconds: 3, expectedUpdatedAt: a.updatedAt }), 409, 'stale_write');
      invalid(await H().patch(`/annotations/${a.id}`, { fileId: f.id }), 'fileId', 'immutable');
      invalid(await H().patch(`/annotations/${a.id}`, { type: 'image' }), 'type', 'immutable');
      invalid(await H().patch(`/annotations/${a.id}`, { videoTimeSeconds: -1 }), 'videoTimeSeconds');
      problem(await H().patch(`/annotations/${a.id}`, {}), 400, 'empty_update');
      expect(ok(await H().patch(`/annotations/${a.id}`, { videoTimeSeconds: null })).videoTimeSeconds).toBeNull();
      expect(ok(await H().get(`/annotations/${a.id}`)).fileId).toBe(g.id);
      const past = await H().patch(`/annotations/${a.id}`, { position: { shape: 'RECTANGLE', x: 90, y: 0, width: 20, height: 5 } });
      invalidUnder(past, 'position');
      expect(ok(await H().get(`/annotations/${a.id}`)).position).toEqual({ shape: 'POINT', x: 50, y: 50 });
      invalidUnder(past, 'position', 'out_of_bounds');
    });

    it('filters: fileId[eq|in], type[eq|in], videoTimeSeconds[eq|gt|gte|lt|lte|null|notNull]; default sort createdAt', async () => {
      const file = ok(await H().upload('v', { name: 'filters.mp4', projectId: p.id }), 201);
      const mk = async (body: Record<string, unknown>) => {
        H().clock.advance(1000);
        return create({ fileId: file.id, ...body });
      };
      const a0 = await mk({ type: 'image' });
      const a5 = await mk({ type: 'video', videoTimeSeconds: 5 });
      const a10 = await mk({ type: 'video', videoTimeSeconds: 10.25 });
      const a20 = await mk({ type: 'video', videoTimeSeconds: 20 });
      const on = `fileId[eq]=${file.id}`;
      expect(ids(await H().get(`/annotations?${on}`))).toEqual([a0.id, a5.id, a10.id, a20.id]);
      expect(ids(await H().get(`/annotations?fileId[in]=${file.id},${f.id}&type[eq]=video&videoTimeSeconds[eq]=5`))).toEqual([a5.id]);
      expect(ids(await H().get(`/annotations?${on}&videoTimeSeconds[eq]=10.25`))).toEqual([a10.id]);
      expect(ids(await H().get(`/annotations?${on}&videoTimeSeconds[gt]=5`))).toEqual([a10.id, a20.id]);
      expect(ids(await H().get(`/annotations?${on}&videoTimeSeconds[gte]=5&videoTimeSeconds[lt]=20`))).toEqual([a5.id, a10.id]);
      expect(ids(await H().get(`/annotations?${on}&videoTimeSeconds[lte]=10.25`))).toEqual([a5.id, a10.id]);
      expect(ids(await H().get(`/annotations?${on}&videoTimeSeconds[null]=true`))).toEqual([a0.id]);
      expect(ids(await H().get(`/annotations?${on}&videoTimeSeconds[notNull]=true`))).toEqual([a5.id, a10.id, a20.id]);
      expect(ids(await H().get(`/annotations?${on}&type[in]=image`))).toEqual([a0.id]);
      expect(ids(await H().get(`/annotations?${on}&type[in]=image,video`))).toHaveLength(4);
      expect(ids(await H().get(`/annotations?${on}&sort=-createdAt`))).toEqual([a20.id, a10.id, a5.id, a0.id]);
      problem(await H().get(`/annotations?${on}&purgeAt[null]=true`), 400, 'invalid_query_param');
    });

    it('the first comment (POST /messages {annotationId, text}) makes the file\'s thread task; the annotation\'s taskId and the file\'s annotationTaskId point at it; a second annotation reuses it', async () => {
      const file = ok(await H().upload(makePng(8, 8), { name: 'review.png', projectId: p.id }), 201);
      const a1 = await create({ fileId: file.id });
      H().clock.advance(1000);
      const a2 = await create({ fileId: file.id });
      const { result, events } = await during(H(), () => H().post('/messages', { annotationId: a1.id, text: 'This is off' }));
      ok(result, 201);
      const one = ok(await H().get(`/annotations/${a1.id}?expand=task,messages`));
      expect(typeof one.taskId).toBe('string');
      expect(one.task).toMatchObject({ id: one.taskId, name: 'Annotations: review.png', projectId: p.id });
      expect(one.messages.map((m: any) => m.text)).toEqual(['This is off']);
      expect(ok(await H().get(`/files/${file.id}`)).annotationTaskId).toBe(one.taskId);
      expect(ofType(events, 'annotation.updated', a1.id)).toHaveLength(1);
      expect(ofType(events, 'file.updated', file.id)).toHaveLength(1);
      ok(await H().post('/messages', { annotationId: a2.id, text: 'And this' }), 201);
      expect(ok(await H().get(`/annotations/${a2.id}`)).taskId).toBe(one.taskId);
      expect(ids(await H().get(`/annotations?taskId[eq]=${one.taskId}`))).toEqual([a1.id, a2.id]);
      expect(ids(await H().get(`/files?annotationTaskId[eq]=${one.taskId}`))).toEqual([file.id]);
    });

    it('the first comment opens the thread whatever the file is named (a spam-like name is not the caller\'s) and even when every status of the project is archived (the task then has no status)', async () => {
      const h = H();
      const q = await h.project({ name: 'Annot archived statuses' });
      const spammy = ok(await h.upload(makePng(8, 8), { name: 'casino night.png', projectId: q.id }), 201);
      const a = await create({ fileId: spammy.id });
      ok(await h.post('/messages', { annotationId: a.id, text: 'Looks fine' }), 201);
      const task = ok(await h.get(`/annotations/${a.id}?expand=task`)).task;
      expect(task.name).toBe('Annotations');
      expect(task.projectId).toBe(q.id);
      for (const s of ok(await h.get(`/statuses?projectId=${q.id}`)).data) ok(await h.patch(`/statuses/${s.id}`, { archived: true }));
      const plain = ok(await h.upload(makePng(8, 8), { name: 'plain.png', projectId: q.id }), 201);
      const b = await create({ fileId: plain.id });
      ok(await h.post('/messages', { annotationId: b.id, text: 'Still works' }), 201);
      const t2 = ok(await h.get(`/annotations/${b.id}?expand=task`)).task;
      expect(t2).toMatchObject({ name: 'Annotations: plain.png', projectId: q.id, statusId: null });
    });

    it('a file in the trash takes no new comments on its annotations (404 naming annotationId, nothing written); restored, it does', async () => {
      const h = H();
      const file = ok(await h.upload(makePng(8, 8), { name: 'trashed.png', projectId: p.id }), 201);
      const a = await create({ fileId: file.id });
      expect((await h.del(`/files/${file.id}`)).status).toBe(204);
      const { result, events } = await during(h, () => h.post('/messages', { annotationId: a.id, text: 'Too late' }));
      expect(problem(result, 404, 'resource_not_found').field).toBe('annotationId');
      expect(events).toEqual([]);
      expect(ok(await h.get(`/annotations/${a.id}`)).taskId).toBeNull();
      ok(await h.post(`/files/${file.id}/restore`));
      ok(await h.post('/messages', { annotationId: a.id, text: 'Back again' }), 201);
      expect(ok(await h.get(`/annotations/${a.id}`)).taskId).toBeTypeOf('string');
    });

    it('DELETE is a hard delete: 204 (annotation.removed), then 404 and never listed; its comment thread goes with it; other annotations\' comments stay', async () => {
      const file = ok(await H().upload('d', { name: 'del.png', projectId: p.id }), 201);
      const a = await create({ fileId: file.id });
      const keep = await create({ fileId: file.id });
      const m1 = ok(await H().post('/messages', { annotationId: a.id, text: 'first' }), 201);
      const m2 = ok(await H().post('/messages', { annotationId: a.id, fileId: file.id, text: 'second' }), 201);
      const mk = ok(await H().post('/messages', { annotationId: keep.id, text: 'kept' }), 201);
      const { result, events } = await during(H(), () => H().del(`/annotations/${a.id}`));
      ok(result, 204);
      expect(ofType(events, 'annotation.removed', a.id)).toHaveLength(1);
      problem(await H().get(`/annotations/${a.id}`), 404, 'resource_not_found');
      problem(await H().del(`/annotations/${a.id}`), 404, 'resource_not_found');
      expect(ids(await H().get(`/annotations?fileId[eq]=${file.id}`))).toEqual([keep.id]);
      problem(await H().get(`/messages/${m1.id}`), 404, 'resource_not_found');
      problem(await H().get(`/messages/${m2.id}`), 404, 'resource_not_found');
      problem(await H().post(`/messages/${m1.id}/restore`), 404, 'resource_not_found');
      expect(ok(await H().get(`/messages/${mk.id}`)).text).toBe('kept');
    });

    it('an annotation is seen by whoever sees its file: another workspace gets 404 on it and on creating one for the file', async () => {
      const a = await create({});
      problem(await H().get(`/annotations/${a.id}`, { token: H().b.owner.token }), 404, 'resource_not_found');
      problem(await H().patch(`/annotations/${a.id}`, { position: {} }, { token: H().b.owner.token }), 404, 'resource_not_found');
      problem(await H().del(`/annotations/${a.id}`, { token: H().b.owner.token }), 404, 'resource_not_found');
      problem(await H().post('/annotations', { type: 'image', fileId: f.id }, { token: H().b.owner.token }), 404, 'resource_not_found');
      expect(ids(await H().get('/annotations?limit=200', { token: H().b.owner.token }))).toEqual([]);
    });

    it('deleting the file keeps its annotations for a restore; purging it destroys them (annotation.removed)', async () => {
      const file = ok(await H().upload('t', { name: 'trash.png', projectId: p.id }), 201);
      const a = await create({ fileId: file.id });
      ok(await H().del(`/files/${file.id}`), 204);
      problem(await H().post('/annotations', { type: 'image', fileId: file.id }), 404, 'resource_not_found');
      ok(await H().post(`/files/${file.id}/restore`));
      expect(ok(await H().get(`/annotations/${a.id}`)).fileId).toBe(file.id);
      ok(await H().del(`/files/${file.id}`), 204);
      H().clock.advance(RETENTION_MS + DAY);
      const { events } = await during(H(), () => H().api.jobs.purge());
      expect(ofType(events, 'file.force_deleted', file.id)).toHaveLength(1);
      expect(ofType(events, 'annotation.removed', a.id)).toHaveLength(1);
      problem(await H().get(`/annotations/${a.id}`), 404, 'resource_not_found');
    });
  });

  describe(`[${factory.name}] v3 Files: an upload link stops taking bytes once its file is registered (docs/not-shown.md "Upload flow", "Signed blob links")`, () => {
    const H = perDescribe(factory);

    it('PUT to the upload URL after POST /files → 403 link_invalid, and the file\'s bytes are unchanged', async () => {
      const p = await H().project({ name: 'Sealed P' });
      const data = new TextEncoder().encode('original bytes');
      const s = ok(await H().post('/files/upload-url', { size: data.byteLength }));
      expect((await H().fetchLink('PUT', s.url, data)).status).toBe(200);
      const f = ok(await H().post('/files', { uploadKey: s.uploadKey, name: 'sealed.txt', size: data.byteLength, projectId: p.id }), 201);
      const other = new TextEncoder().encode('replaced bytes');
      expect(other.byteLength).toBe(data.byteLength);
      linkProblem(await H().fetchLink('PUT', s.url, other), 403, 'link_invalid');
      const got = await H().fetchLink('GET', f.download);
      expect(got.status).toBe(200);
      sameBytes(bytesOf(got), data);
      sameBytes(bytesOf(await H().fetchLink('GET', ok(await H().get(`/files/${f.id}`)).url)), data);
    });
  });

  describe(`[${factory.name}] v3 Files: purging a project destroys its files (docs/not-shown.md "Deleting files", "Storage quota")`, () => {
    const blobs: BlobStore = createMemoryBlobStore();
    const QUOTA = 100;
    // Links that outlive the retention period, so the same link can be tried after the purge.
    const H = perDescribe(factory, () => ({ files: { store: blobs, downloadTtlSeconds: 90 * 24 * 3600 } }));

    it('files placed by projectId and by folderId go with the purged project; their bytes go through the job queue (links then 404) and the quota is freed', async () => {
      await H().api.admin.setWorkspaceSettings(H().a.id, { storageQuotaBytes: QUOTA });
      const p = await H().project({ name: 'Purged P' });
      const q = await H().project({ name: 'Kept Q' });
      const folder = ok(await H().post('/document-folders', { name: 'Purged folder', projectId: p.id }), 201);
      const byProject = ok(await H().upload(new Uint8Array(30).fill(1), { name: 'by-project.bin', projectId: p.id }), 201);
      const byFolder = ok(await H().upload(new Uint8Array(30).fill(2), { name: 'by-folder.bin', folderId: folder.id }), 201);
      expect(byFolder.projectId).toBe(p.id);
      const kept = ok(await H().upload(new Uint8Array(10).fill(3), { name: 'kept.bin', projectId: q.id }), 201);
      const ann = ok(await H().post('/annotations', { type: 'image', fileId: byProject.id, position: {} }), 201);
      // A chat message outside the project lists the files: it outlives the purge and lists them no more.
      const room = ok(await H().post('/chats', { name: 'Outside the project' }), 201);
      const shared = ok(await H().post('/messages', { chatId: room.id, text: 'both files', files: [byProject.id, byFolder.id, kept.id] }), 201);
      expect(shared.files).toHaveLength(3);
      const over = await H().post('/files/upload-url', { size: 31 });
      invalid(over, 'size', 'storage_quota_exceeded');
      expect(over.body).toMatchObject({ usedBytes: 70 });

      ok(await H().del(`/projects/${p.id}`), 204);
      H().clock.advance(RETENTION_MS + DAY);
      const { events } = await during(H(), () => H().api.jobs.purge());
      expect(ofType(events, 'project.force_deleted', p.id)).toHaveLength(1);
      // Each destroyed file is announced (docs/not-shown.md "Purging a project"), and so is the project's discussion chat.
      expect(ofType(events, 'file.force_deleted').map((e) => e.aggregateId).sort()).toEqual([byProject.id, byFolder.id].sort());
      expect(p.discussionChatId).toBeTypeOf('string');
      expect(ofType(events, 'chat.removed', p.discussionChatId)).toHaveLength(1);
      for (const f of [byProject, byFolder]) {
        problem(await H().get(`/files/${f.id}`), 404, 'resource_not_found');
        expect(ids(await H().get('/files?purgeAt[notNull]=true&limit=200'))).not.toContain(f.id);
      }
      expect(ids(await H().get('/files?limit=200'))).toEqual([kept.id]);
      expect(ok(await H().get(`/files/${kept.id}`)).projectId).toBe(q.id);
      problem(await H().get(`/annotations/${ann.id}`), 404, 'resource_not_found');
      expect(ok(await H().get(`/messages/${shared.id}`)).files).toEqual([kept.id]);

      await drainJobs(H());
      for (const f of [byProject, byFolder]) {
        expect(await blobs.size(keyOfLink(f.url))).toBeUndefined();
        linkProblem(await H().fetchLink('GET', f.download), 404, 'resource_not_found');
      }
      sameBytes(bytesOf(await H().fetchLink('GET', kept.download)), new Uint8Array(10).fill(3));
      // Only the kept file's 10 bytes still count.
      ok(await H().post('/files/upload-url', { size: QUOTA - 10 }));
      invalid(await H().post('/files/upload-url', { size: 1 }), 'size', 'storage_quota_exceeded');
    });
  });

  describe(`[${factory.name}] v3 Files: files attached to a task's comments follow the task's move (docs/not-shown.md "Message contexts", "File places")`, () => {
    const H = perDescribe(factory);

    it('a file uploaded onto a comment (and onto a reply to it) takes the new project (file.updated); a member of the new project who cannot open the old one may GET it', async () => {
      const oldP = await H().project({ name: 'Old files home', accessType: 'limited', members: [H().a.owner.id] });
      const newP = await H().project({ name: 'New files home', accessType: 'limited', members: [H().a.owner.id, H().a.regular.id] });
      const t = await H().task(oldP.id, { name: 'Moving thread' });
      const comment = ok(await H().post('/messages', { taskId: t.id, text: 'See attached' }), 201);
      const reply = ok(await H().post('/messages', { parentMessageId: comment.id, text: 'And this one' }), 201);
      const onComment = ok(await H().upload('on comment', { name: 'on-comment.txt', messageId: comment.id }), 201);
      const onReply = ok(await H().upload('on reply', { name: 'on-reply.txt', messageId: reply.id }), 201);
      expect([onComment.projectId, onReply.projectId]).toEqual([oldP.id, oldP.id]);
      const fileComment = ok(await H().post('/messages', { fileId: onComment.id, text: 'On the attachment' }), 201);
      problem(await H().get(`/files/${onComment.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');

      const { result, events } = await during(H(), () => H().patch(`/tasks/${t.id}`, { projectId: newP.id }));
      ok(result);
      const bytesOfName: Record<string, string> = { 'on-comment.txt': 'on comment', 'on-reply.txt': 'on reply' };
      for (const f of [onComment, onReply]) {
        expect(ok(await H().get(`/files/${f.id}`))).toMatchObject({ projectId: newP.id, messageId: f.messageId });
        expect(ofType(events, 'file.updated', f.id).map((e) => e.payload.file.projectId)).toEqual([newP.id]);
        const seen = ok(await H().get(`/files/${f.id}`, { token: H().a.regular.token }));
        expect(seen).toMatchObject({ id: f.id, projectId: newP.id });
        sameBytes(bytesOf(await H().fetchLink('GET', seen.download)), new TextEncoder().encode(bytesOfName[f.name]!));
      }
      expect(ids(await H().get(`/files?projectId[eq]=${newP.id}`, { token: H().a.regular.token })).sort()).toEqual([onComment.id, onReply.id].sort());
      expect(ids(await H().get(`/files?projectId[eq]=${oldP.id}`))).toEqual([]);
      // The comment on the moved file follows as well.
      expect(ok(await H().get(`/messages/${fileComment.id}`, { token: H().a.regular.token })).id).toBe(fileComment.id);
    });
  });

  describe(`[${factory.name}] v3 Files: edit-text measures the result before building it (docs/not-shown.md "Documents"; 1,000,000-character body)`, () => {
    const H = perDescribe(factory);
    const DOCUMENT_BODY_MAX = 1_000_000;

    it('a replaceAll whose result would exceed 1,000,000 characters → 400 too_big on newText (never 500) and the body is unchanged; exactly 1,000,000 is accepted', async () => {
      const p = await H().project({ name: 'Edit bound P' });
      const body = 'a'.repeat(1000);
      const d = ok(await H().post('/documents', { title: 'Many matches', projectId: p.id, body }), 201);
      invalid(await H().post(`/documents/${d.id}/edit-text`, { oldText: 'a', newText: 'b'.repeat(2000), replaceAll: true }), 'newText', 'too_big');
      expect(ok(await H().get(`/documents/${d.id}`)).body).toBe(body);
      // 1,000 matches × 1,000,000 characters: past the longest string the runtime can build.
      invalid(await H().post(`/documents/${d.id}/edit-text`, { oldText: 'a', newText: 'b'.repeat(DOCUMENT_BODY_MAX), replaceAll: true }), 'newText', 'too_big');
      expect(ok(await H().get(`/documents/${d.id}`)).body).toBe(body);
      // 1,000 × 1,000 = exactly the bound: fine.
      ok(await H().post(`/documents/${d.id}/edit-text`, { oldText: 'a', newText: 'c'.repeat(DOCUMENT_BODY_MAX / body.length), replaceAll: true }));
      expect(ok(await H().get(`/documents/${d.id}`)).body).toHaveLength(DOCUMENT_BODY_MAX);
    });
  });

  describe(`[${factory.name}] v3 Files: blob keys are never decoded — a malformed percent escape is a refused link, never 500 (docs/not-shown.md "Signed blob links")`, () => {
    /** Variants of a link with a malformed escape put into its key. */
    const mangled = (url: string): string[] => {
      const u = new URL(url, 'http://in-process.invalid');
      const at = u.pathname.indexOf('/blobs/') + '/blobs/'.length;
      const path = u.pathname;
      return [
        `${path}%E0%A4%A${u.search}`,
        `${path.slice(0, at)}%E0%A4%A/${path.slice(at)}${u.search}`,
        `${path.slice(0, at)}%ZZ${path.slice(at)}${u.search}`,
        `${path}%${u.search}`,
      ];
    };
    const refused = (res: HttpResponse, what: string) => {
      // HEAD answers carry no body: the status alone tells.
      const code = res.body === undefined ? undefined : res.status === 200 || res.status === 302 ? undefined : jsonOf(res).code;
      if (what.startsWith('HEAD')) expect([403, 404], `${what}: ${res.status}`).toContain(res.status);
      else expect([[403, 'link_invalid'], [404, 'resource_not_found']], `${what}: ${res.status} ${code}`).toContainEqual([res.status, code]);
    };

    describe('with pmapi serving the bytes (memory store)', () => {
      const H = perDescribe(factory);

      it('GET, HEAD and PUT of links with a malformed escape in the key → 403 link_invalid or 404, never 500', async () => {
        const p = await H().project({ name: 'Escapes P' });
        const f = ok(await H().upload('escape', { name: 'escape.txt', projectId: p.id }), 201);
        for (const link of [f.url, f.download]) {
          for (const bad of mangled(link)) {
            refused(await H().fetchLink('GET', bad), `GET ${bad}`);
            refused(await H().fetchLink('HEAD', bad), `HEAD ${bad}`);
          }
        }
        const s = ok(await H().post('/files/upload-url', { size: 1 }));
        for (const bad of mangled(s.url)) refused(await H().fetchLink('PUT', bad, new Uint8Array([1])), `PUT ${bad}`);
        expect((await H().fetchLink('GET', f.url)).status).toBe(200);
      });
    });

    describe('with a store that presigns downloads (S3-compatible)', () => {
      const presigned: Array<{ key: string; contentType: string; disposition: string }> = [];
      const base = createMemoryBlobStore();
      const store: BlobStore = {
        ...base,
        kind: 'presigning',
        async presignDownload(key, o) {
          presigned.push({ key, contentType: o.contentType, disposition: o.disposition });
          return `https://bucket.invalid/${key}?sig=x`;
        },
      };
      const H = perDescribe(factory, () => ({ files: { store } }));

      it('GET and HEAD of links with a malformed escape in the key → 403 link_invalid or 404, never 500; the good link redirects with pmapi\'s content type', async () => {
        const p = await H().project({ name: 'Presign P' });
        const f = ok(await H().upload('escape', { name: 'escape.txt', projectId: p.id }), 201);
        const h = ok(await H().upload('<b>x</b>', { name: 'page.html', projectId: p.id }), 201);
        for (const link of [f.url, f.download]) {
          for (const bad of mangled(link)) {
            refused(await H().fetchLink('GET', bad), `GET ${bad}`);
            refused(await H().fetchLink('HEAD', bad), `HEAD ${bad}`);
          }
        }
        presigned.length = 0;
        const good = await H().fetchLink('GET', f.url);
        expect(good.status).toBe(302);
        expect(good.headers.location).toBe(`https://bucket.invalid/${keyOfLink(f.url)}?sig=x`);
        expect((await H().fetchLink('GET', h.url)).status).toBe(302);
        expect(presigned).toEqual([
          { key: keyOfLink(f.url), contentType: 'text/plain; charset=utf-8', disposition: 'inline' },
          { key: keyOfLink(h.url), contentType: 'application/octet-stream', disposition: 'attachment' },
        ]);
      });
    });
  });

  describe(`[${factory.name}] v3 Files: pending upload URLs count toward the quota until they expire (docs/not-shown.md "Storage quota", "Upload flow")`, () => {
    const H = perDescribe(factory);
    const QUOTA = 100;

    it('an upload URL of the whole quota leaves no room for another (storage_quota_exceeded, usedBytes counting it) until 24 hours have passed', async () => {
      await H().api.admin.setWorkspaceSettings(H().a.id, { storageQuotaBytes: QUOTA });
      ok(await H().post('/files/upload-url', { size: QUOTA }));
      const refusedUrl = await H().post('/files/upload-url', { size: 1 });
      invalid(refusedUrl, 'size', 'storage_quota_exceeded');
      expect(refusedUrl.body).toMatchObject({ quotaBytes: QUOTA, usedBytes: QUOTA });
      invalid(await H().post('/files/from-content', { name: 'one.txt', content: 'x', projectId: (await H().project({ name: 'Pending P' })).id }), 'content', 'storage_quota_exceeded');
      H().clock.advance(UPLOAD_KEY_TTL_MS - MINUTE);
      invalid(await H().post('/files/upload-url', { size: 1 }), 'size', 'storage_quota_exceeded');
      H().clock.advance(MINUTE + 1000);
      expect(ok(await H().post('/files/upload-url', { size: 1 })).size).toBe(1);
    });
  });
}
