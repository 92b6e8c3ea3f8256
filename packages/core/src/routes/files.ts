import { z } from 'zod';
import type { CustomRoute } from '../http/routes';
import type { ReadContext, WriteContext } from '../services/context';
import type { OpResult } from '../services/engine';
import { ProblemError } from '../errors/problem';
import { iso } from '../clock/index';
import { parseOperationBody } from '../services/body';
import { audienceOf, newRecord } from '../services/records';
import { presentRecord } from '../services/serialize';
import { fieldError } from '../resources/rules';
import { FILE_NAME_MAX, assertQuota, attachToMessage, folderStackOf, placeFile, queueProcessing, uploaderOf } from '../resources/file.resource';
import { FILE_SIZE_MAX } from '../files/service';
import { UrlFetchError } from '../files/ports';
import { insertUpload, usedBytes, workspaceQuota } from '../sql/queries/files';

/*
 * The file operations (spec "File": create-upload-URL, create from content,
 * upload from URL; events file.createUploadUrl, file.createFromContent,
 * file.uploadFromUrl). Paths and bodies are "not shown": docs/not-shown.md
 * "Files". The two one-call operations store the bytes before their write
 * transaction opens (`prepare`), so no transaction waits on the network, and
 * remove them again if the write fails.
 */

/** Largest decoded body of create-from-content (the JSON body limit of the front end applies first). */
export const FROM_CONTENT_MAX_BYTES = 10 * 1024 * 1024;

const ID = z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64);
const name = z.string().trim().min(1, 'must not be blank').max(FILE_NAME_MAX, `must be at most ${FILE_NAME_MAX} characters`);
const place = {
  projectId: ID.optional(),
  taskId: ID.optional(),
  documentId: ID.optional(),
  messageId: ID.optional(),
  folderId: ID.optional(),
};

const uploadUrlBody = z.strictObject({
  size: z.number().int('must be a whole number of bytes').min(0).max(FILE_SIZE_MAX, `must be at most ${FILE_SIZE_MAX} bytes`),
});

const fromContentBody = z.strictObject({
  name,
  content: z.string(),
  encoding: z.enum(['utf8', 'base64']).optional(),
  ...place,
});

const fromUrlBody = z.strictObject({
  url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2048),
  name: name.optional(),
  ...place,
});

type Placed = z.output<typeof fromContentBody> | z.output<typeof fromUrlBody>;

/** Bytes stored by `prepare`, waiting for the write that registers them. */
interface Stored {
  body: Placed & { name: string };
  key: string;
  size: number;
}

/** A fresh blob key of the workspace (`BLOB_KEY_PATTERN`: letters, digits, `-`, `_`, `/`). */
function newBlobKey(ctx: ReadContext): string {
  return `${ctx.teamId.replace(/[^A-Za-z0-9_-]/g, '-')}/${ctx.ids.uuid()}`;
}

/** The workspace's quota and what its files use (a read, for early refusals; the write checks again under a lock). */
async function quotaOf(ctx: ReadContext): Promise<{ quotaBytes: number; usedBytes: number; left: number }> {
  const quotaBytes = (await workspaceQuota(ctx.repo, ctx.teamId)) ?? ctx.files.quotaBytes;
  const used = await usedBytes(ctx.repo, ctx.teamId, ctx.now);
  return { quotaBytes, usedBytes: used, left: Math.max(0, quotaBytes - used) };
}

/**
 * POST /files/upload-url with exactly `{size}`: an uploadKey and a URL to PUT
 * exactly that many bytes to (pmapi's own signed link, or the blob store's
 * presigned URL), valid for the upload TTL; the uploadKey is then registered
 * with POST /files within the uploadKey TTL, by the same member, once.
 */
async function uploadUrl(ctx: WriteContext, raw: unknown): Promise<OpResult> {
  const { size } = parseOperationBody(uploadUrlBody, raw);
  ctx.files.requireStore();
  const max = ctx.files.maxUploadBytes;
  if (max !== undefined && size > max) throw fieldError('size', 'too_big', `uploads to this server are at most ${max} bytes; larger files need an S3-compatible store`);
  await assertQuota(ctx, size);
  const key = newBlobKey(ctx);
  const uploadKey = ctx.ids.id();
  const link = await ctx.files.uploadLink(key, size, ctx.now);
  await insertUpload(ctx.repo, {
    id: uploadKey, teamId: ctx.teamId, memberId: ctx.principal.memberId, blobKey: key, size, expiresAt: ctx.now + ctx.files.uploadKeyTtlSeconds * 1000, now: ctx.now,
  });
  const body = { uploadKey, url: link.url, method: 'PUT', size, expiresAt: iso(link.expiresAt * 1000) };
  // The URL is a credential to write the file's bytes: webhook receivers get everything but it.
  const { url: _credential, ...announced } = body;
  ctx.emit({ type: 'file.createUploadUrl', aggregateType: 'file', aggregateId: uploadKey, projectId: null, payload: { file: announced } });
  return { status: 200, body };
}

/** Register bytes already stored under `key` as a new file (the second half of the one-call operations). */
async function register(ctx: WriteContext, stored: Stored, verb: 'createFromContent' | 'uploadFromUrl'): Promise<OpResult> {
  const res = ctx.registry.get('file');
  const input: Record<string, unknown> = { ...stored.body };
  const where = await placeFile(ctx, input);
  await assertQuota(ctx, stored.size);
  const rec = await newRecord(ctx, res, {
    name: stored.body.name, size: stored.size, uploadKey: null, projectId: where.projectId,
    taskId: input.taskId ?? null, documentId: input.documentId ?? null, messageId: input.messageId ?? null, folderId: input.folderId ?? null,
    processed: false, folderStack: await folderStackOf(ctx, input.folderId as string | undefined), ...uploaderOf(ctx),
    annotationTaskId: null, blobKey: stored.key, thumbnailKey: null, accessChatId: where.accessChatId, privateDoc: where.privateDoc,
  });
  await ctx.repo.insert(res, ctx.teamId, rec);
  await queueProcessing(ctx, rec);
  await attachToMessage(ctx, rec);
  const shown = await presentRecord(ctx, res, rec);
  const audience = await audienceOf(ctx, res, rec);
  ctx.emit({ type: `file.${verb}`, aggregateType: 'file', aggregateId: rec.id, projectId: where.projectId, payload: { file: shown }, ...(audience ? { audience } : {}) });
  return { status: 201, body: shown };
}

/** Decode create-from-content's content: UTF-8 text, or strict base64 (padding optional, no other characters). */
function decodeContent(content: string, encoding: 'utf8' | 'base64'): Uint8Array {
  if (encoding === 'utf8') return new TextEncoder().encode(content);
  const clean = content.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.replace(/=+$/, '').length % 4 === 1) {
    throw fieldError('content', 'invalid_base64', 'must be base64 (A-Z, a-z, 0-9, +, /, optional = padding)');
  }
  return new Uint8Array(Buffer.from(clean, 'base64'));
}

/** Store bytes under a fresh key, refusing them early when they cannot fit the quota. */
async function storeBytes(ctx: ReadContext, body: Placed & { name: string }, bytes: Uint8Array, field: string): Promise<Stored> {
  const store = ctx.files.requireStore();
  const { quotaBytes, usedBytes: used, left } = await quotaOf(ctx);
  if (bytes.byteLength > left) {
    throw new ProblemError('validation_failed', 'The file does not fit the workspace\'s storage quota', {
      errors: [{ field, code: 'storage_quota_exceeded', message: `${bytes.byteLength} bytes exceed the ${left} bytes left of the workspace's quota` }],
      quotaBytes, usedBytes: used,
    });
  }
  const key = newBlobKey(ctx);
  await store.put(key, bytes);
  return { body, key, size: bytes.byteLength };
}

async function prepareFromContent(ctx: ReadContext, raw: unknown): Promise<Stored> {
  const body = parseOperationBody(fromContentBody, raw);
  ctx.files.requireStore();
  const bytes = decodeContent(body.content, body.encoding ?? 'utf8');
  if (bytes.byteLength > FROM_CONTENT_MAX_BYTES) throw fieldError('content', 'too_big', `decodes to more than ${FROM_CONTENT_MAX_BYTES} bytes`);
  return storeBytes(ctx, body, bytes, 'content');
}

/** The file name a URL suggests: its last path segment, decoded and trimmed, or `download`. */
export function nameFromUrl(url: string): string {
  const last = new URL(url).pathname.split('/').filter(Boolean).pop() ?? '';
  let decoded = last;
  try {
    decoded = decodeURIComponent(last);
  } catch {
    // A malformed escape: keep the segment as it is.
  }
  const clean = decoded.replace(/[\u0000-\u001f\u007f/\\]/g, '').trim().slice(0, FILE_NAME_MAX).trim();
  return clean || 'download';
}

async function prepareFromUrl(ctx: ReadContext, raw: unknown): Promise<Stored> {
  const body = parseOperationBody(fromUrlBody, raw);
  ctx.files.requireStore();
  const fetcher = ctx.files.fetcher;
  if (!fetcher) throw new ProblemError('service_unavailable', 'Upload from URL is not configured on this server');
  const maxBytes = Math.min(ctx.files.fromUrlMaxBytes, (await quotaOf(ctx)).left);
  let got: { bytes: Uint8Array };
  try {
    got = await fetcher.fetch(body.url, { maxBytes, timeoutMs: ctx.files.fromUrlTimeoutMs });
  } catch (err) {
    if (!(err instanceof UrlFetchError)) throw err;
    const code = err.reason === 'too_large' ? 'too_big' : err.reason;
    const message = err.reason === 'too_large' ? `the target is larger than ${maxBytes} bytes (the upload limit or what is left of the quota)` : err.message.slice(0, 300);
    throw fieldError('url', code, message);
  }
  return storeBytes(ctx, { ...body, name: body.name ?? nameFromUrl(body.url) }, got.bytes, 'url');
}

/** Remove bytes `prepare` stored when the write that would register them fails or replays. */
async function discard(ctx: ReadContext, prepared: unknown): Promise<void> {
  const p = prepared as Stored | undefined;
  if (p?.key) await ctx.files.store?.delete(p.key);
}

export const fileRoutes: CustomRoute[] = [
  {
    method: 'POST', path: 'files/upload-url', scope: { resource: 'files', action: 'write' }, write: true, body: uploadUrlBody,
    run: (ctx, { body }) => uploadUrl(ctx, body),
  },
  {
    method: 'POST', path: 'files/from-content', scope: { resource: 'files', action: 'write' }, write: true, body: fromContentBody,
    prepare: (ctx, { body }) => prepareFromContent(ctx, body),
    discard,
    run: (ctx, { prepared }) => register(ctx, prepared as Stored, 'createFromContent'),
  },
  {
    method: 'POST', path: 'files/from-url', scope: { resource: 'files', action: 'write' }, write: true, body: fromUrlBody,
    prepare: (ctx, { body }) => prepareFromUrl(ctx, body),
    discard,
    run: (ctx, { prepared }) => register(ctx, prepared as Stored, 'uploadFromUrl'),
  },
];

