import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import type { ReadContext, WriteContext } from './hooks';
import { fieldError } from './rules';
import { ProblemError } from '../errors/problem';
import { FILE_SIZE_MAX } from '../files/service';
import { audienceOf } from '../services/records';
import { enqueueFileJob, markUploadUsed, takeUpload, usedBytes, workspaceQuota } from '../sql/queries/files';

/*
 * Files (spec "File"): metadata of bytes kept in the configured blob store.
 * POST /files registers bytes already uploaded through the upload-URL
 * operation (by uploadKey); the create-from-content and upload-from-URL
 * operations (routes/files.ts) do both halves in one call. Post-processing
 * (thumbnail) runs as a durable job (files/jobs.ts). Decisions where the spec
 * is silent: docs/not-shown.md "Files".
 */

export const FILE_NAME_MAX = 255;
/** The parent contexts of a file, fixed at upload; at least one of these or folderId is required. */
export const FILE_CONTEXTS = ['projectId', 'taskId', 'documentId', 'messageId'] as const;

/** The records a file hangs from: its project and the access it inherits. */
interface Placement {
  projectId: string | null;
  /** The chat whose members alone see the file (a file of a chat message). */
  accessChatId: string | null;
  /** The file belongs to a private document: only its uploader (the document's creator) sees it. */
  privateDoc: boolean;
}

/**
 * Where a file goes: exactly one of taskId, documentId and messageId, or
 * none of them with projectId or folderId; projectId sent beside another
 * context must be that context's project (400 `wrong_project`), and so must
 * the folder's. Each record named must be one the caller may open.
 */
export async function placeFile(ctx: WriteContext, input: Record<string, unknown>): Promise<Placement> {
  const sent = (['taskId', 'documentId', 'messageId'] as const).filter((k) => typeof input[k] === 'string');
  if (sent.length > 1) {
    throw new ProblemError('validation_failed', 'A file has one parent context', {
      errors: sent.map((field) => ({ field, code: 'one_context', message: `only one of ${sent.join(', ')} may be given` })),
    });
  }
  if (sent.length === 0 && typeof input.projectId !== 'string' && typeof input.folderId !== 'string') {
    throw new ProblemError('validation_failed', 'A file needs a place: projectId, taskId, documentId, messageId or folderId', {
      errors: [{ field: 'projectId', code: 'context_required', message: 'one of projectId, taskId, documentId, messageId, folderId is required' }],
    });
  }
  let projectId: string | null = null;
  let accessChatId: string | null = null;
  let privateDoc = false;
  const parent = sent[0];
  if (parent) {
    const target = ctx.registry.get(parent === 'taskId' ? 'task' : parent === 'documentId' ? 'document' : 'message');
    const rec = await ctx.mustGet(target, input[parent] as string, parent);
    await ctx.access.assertRecord(target, rec);
    projectId = (target.projectIdOf(rec) as string | null) ?? null;
    if (parent === 'documentId') privateDoc = rec.accessType === 'private';
    if (parent === 'messageId') {
      accessChatId = (rec.accessChatId as string | null) ?? null;
      privateDoc = rec.privateDoc === true;
    }
    if (typeof input.projectId === 'string' && input.projectId !== projectId) {
      throw fieldError('projectId', 'wrong_project', `must be the project of ${parent}, or left out`);
    }
  } else if (typeof input.projectId === 'string') {
    const project = await ctx.mustGet('project', input.projectId, 'projectId');
    await ctx.access.assertRecord(ctx.registry.get('project'), project);
    projectId = project.id;
  }
  if (typeof input.folderId === 'string') {
    const folder = await ctx.mustGet('documentFolder', input.folderId, 'folderId');
    await ctx.access.assertRecord(ctx.registry.get('documentFolder'), folder);
    if (projectId === null && !parent) projectId = folder.projectId as string;
    if (folder.projectId !== projectId) throw fieldError('folderId', 'wrong_project', 'must be a folder of the file\'s project');
  }
  return { projectId, accessChatId, privateDoc };
}

/** The folder path of a folder, root first, ending with the folder itself ([] for none). */
export async function folderStackOf(ctx: ReadContext, folderId: string | null | undefined): Promise<string[]> {
  const stack: string[] = [];
  const folders = ctx.registry.get('documentFolder');
  let id = folderId ?? null;
  // Folder trees are at most 16 deep; the bound also stops a corrupted cycle.
  while (id !== null && stack.length < 32) {
    stack.unshift(id);
    const folder = await ctx.repo.get(folders, ctx.teamId, id);
    id = (folder?.parentId as string | null | undefined) ?? null;
  }
  return stack;
}

/**
 * 400 `storage_quota_exceeded` on `size` unless `bytes` more fit the
 * workspace's quota; checks run one at a time per workspace (the workspace
 * row is locked), so two uploads cannot both take the last free bytes.
 */
export async function assertQuota(ctx: WriteContext, bytes: number): Promise<void> {
  await ctx.repo.lock('workspaces', ctx.teamId);
  const quota = (await workspaceQuota(ctx.repo, ctx.teamId)) ?? ctx.files.quotaBytes;
  const used = await usedBytes(ctx.repo, ctx.teamId, ctx.now);
  if (used + bytes > quota) {
    throw new ProblemError('validation_failed', `The workspace's storage quota (${quota} bytes) has ${Math.max(0, quota - used)} bytes left`, {
      errors: [{ field: 'size', code: 'storage_quota_exceeded', message: `exceeds the ${Math.max(0, quota - used)} bytes left of the workspace's quota` }],
      quotaBytes: quota, usedBytes: used,
    });
  }
}

/** A file uploaded onto a message is one of the message's `files` (message.files.added). */
export async function attachToMessage(ctx: WriteContext, file: Rec): Promise<void> {
  if (typeof file.messageId !== 'string') return;
  const added = await ctx.repo.addLinks('message.files', ctx.teamId, file.messageId, [file.id], ctx.now);
  const messages = ctx.registry.get('message');
  const message = added.length ? await ctx.repo.get(messages, ctx.teamId, file.messageId, { includeTrashed: true }) : undefined;
  if (message) {
    const audience = await audienceOf(ctx, messages, message);
    ctx.emit({
      ...(audience ? { audience } : {}),
      type: 'message.files.added', aggregateType: 'message', aggregateId: message.id, projectId: messages.projectIdOf(message),
      payload: { parentId: message.id, relatedId: file.id, relation: 'files' },
    });
  }
}

/** Queue post-processing of a new file (thumbnail) in the creating transaction. */
export async function queueProcessing(ctx: WriteContext, file: Rec): Promise<void> {
  await enqueueFileJob(ctx.repo, { id: ctx.ids.id(), teamId: ctx.teamId, kind: 'process', fileId: file.id, blobKey: file.blobKey as string, now: ctx.now });
}

/** Queue removal of bytes: they go once the transaction that dropped them commits. */
export async function queueBlobRemoval(ctx: WriteContext, keys: ReadonlyArray<string | null | undefined>): Promise<void> {
  for (const key of keys) {
    if (typeof key === 'string') await enqueueFileJob(ctx.repo, { id: ctx.ids.id(), teamId: ctx.teamId, kind: 'delete_blob', fileId: null, blobKey: key, now: ctx.now });
  }
}

/** Time-limited links of a file's bytes and thumbnail (spec "File": url, download, thumbnail). */
function presentLinks(ctx: ReadContext, rec: Rec, out: Record<string, unknown>): void {
  const name = String(rec.name);
  if (typeof rec.blobKey === 'string') {
    out.url = ctx.files.downloadLink(rec.blobKey, name, 'inline', ctx.now);
    out.download = ctx.files.downloadLink(rec.blobKey, name, 'attachment', ctx.now);
  }
  out.thumbnail = rec.processed === true && typeof rec.thumbnailKey === 'string'
    ? ctx.files.downloadLink(rec.thumbnailKey, `${name.replace(/\.[^.]*$/, '')}-thumbnail.${rec.thumbnailKey.endsWith('-png') ? 'png' : 'jpg'}`, 'inline', ctx.now)
    : null;
}

export const fileResource = defineResource({
  name: 'file',
  path: 'files',
  softDelete: true,
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    name: f.string({ trim: true, min: 1, max: FILE_NAME_MAX, required: true }),
    size: f.integer({ min: 0, max: FILE_SIZE_MAX, mode: 'createOnly', required: true }),
    uploadKey: f.string({ min: 1, max: 64, mode: 'createOnly', writeOnly: true, nullable: true }),
    projectId: f.ref('project', { mode: 'createOnly', nullable: true }),
    taskId: f.ref('task', { mode: 'createOnly', nullable: true, onDelete: 'cascade' }),
    documentId: f.ref('document', { mode: 'createOnly', nullable: true, onDelete: 'cascade' }),
    messageId: f.ref('message', { mode: 'createOnly', nullable: true, onDelete: 'cascade' }),
    folderId: f.ref('documentFolder', { nullable: true }),
    processed: f.readOnly('boolean'),
    folderStack: f.readOnly('json'),
    uploaderId: f.readOnly('text', { nullable: true }),
    annotationTaskId: f.readOnly('text', { nullable: true }),
    labels: f.refs('labels', { target: 'label' }),
    subscribers: f.refs('subscribers', { target: 'member' }),
    blobKey: f.readOnly('text', { internal: true }),
    thumbnailKey: f.readOnly('text', { nullable: true, internal: true }),
    accessChatId: f.readOnly('text', { nullable: true, internal: true }),
    privateDoc: f.readOnly('boolean', { internal: true }),
    /** The member the upload acted for (also through an OAuth app, whose uploads have no uploaderId): a private document's file is theirs alone. */
    ownerId: f.readOnly('text', { nullable: true, internal: true }),
  },
  extraResponseFields: ['url', 'download', 'thumbnail'],
  projectField: 'projectId',
  listParams: { projectId: {} },
  membersOnly: { links: 'chat.members', field: 'accessChatId' },
  privateTo: { field: 'privateDoc', value: true, owner: 'ownerId' },
  filters: {
    purgeAt: { ops: ['null', 'notNull', ...RANGE] },
    name: { ops: ['eq', 'contains', 'startsWith'] },
    projectId: { ops: ['eq', 'in'] },
    taskId: { ops: ['eq', 'in'] },
    documentId: { ops: ['eq', 'in'] },
    messageId: { ops: ['eq', 'in'] },
    folderId: { ops: ['eq', 'in'] },
    annotationTaskId: { ops: ['eq', 'in'] },
    uploaderId: { ops: ['eq', 'in'] },
    processed: { ops: ['eq'] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  sortable: ['name', 'size'],
  defaultSort: '-createdAt',
  expand: {
    uploader: { kind: 'one', target: 'member', field: 'uploaderId' },
    folder: { kind: 'one', target: 'documentFolder', field: 'folderId' },
    annotationTask: { kind: 'one', target: 'task', field: 'annotationTaskId' },
    annotations: { kind: 'children', target: 'annotation', field: 'fileId' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      const place = await placeFile(ctx, input);
      if (typeof input.uploadKey !== 'string') throw fieldError('uploadKey', 'required', 'the uploadKey the upload-URL operation returned');
      const upload = await takeUpload(ctx.repo, ctx.teamId, input.uploadKey);
      if (!upload || upload.memberId !== ctx.principal.memberId || upload.usedAt !== null || upload.expiresAt <= ctx.now) {
        throw fieldError('uploadKey', 'invalid_upload_key', 'is unknown, already registered, expired, or another member\'s');
      }
      if (upload.size !== input.size) throw fieldError('size', 'size_mismatch', `the upload URL was made for ${upload.size} bytes`);
      const stored = await ctx.files.requireStore().size(upload.blobKey);
      if (stored === undefined) throw fieldError('uploadKey', 'not_uploaded', 'no bytes were uploaded with this key yet');
      if (stored !== input.size) throw fieldError('size', 'size_mismatch', `${stored} bytes were uploaded, not ${input.size}`);
      // Registered, it stops counting as a pending upload and counts as the file it becomes.
      await markUploadUsed(ctx.repo, upload.id, ctx.now);
      await assertQuota(ctx, input.size!);
      Object.assign(input, {
        uploadKey: null, blobKey: upload.blobKey, projectId: place.projectId, accessChatId: place.accessChatId, privateDoc: place.privateDoc,
        processed: false, folderStack: await folderStackOf(ctx, input.folderId as string | null | undefined),
        ...uploaderOf(ctx), annotationTaskId: null, thumbnailKey: null,
      });
    },
    async afterCreate(ctx, rec) {
      await queueProcessing(ctx, rec);
      await attachToMessage(ctx, rec);
    },
    async beforeUpdate(ctx, current, patch) {
      if (patch.folderId !== undefined && patch.folderId !== current.folderId) {
        if (typeof patch.folderId === 'string') {
          const folder = await ctx.mustGet('documentFolder', patch.folderId, 'folderId');
          await ctx.access.assertRecord(ctx.registry.get('documentFolder'), folder);
          if (folder.projectId !== current.projectId) throw fieldError('folderId', 'wrong_project', 'must be a folder of the file\'s project');
        }
        patch.folderStack = await folderStackOf(ctx, patch.folderId);
      }
    },
    async beforeDestroy(ctx, rec) {
      await queueBlobRemoval(ctx, [rec.blobKey, rec.thumbnailKey]);
    },
    present: presentLinks,
  },
});

/** Files whose folder path ran through a folder that moved get their folderStack again (each with file.updated). */
export async function refreshFolderStacks(ctx: WriteContext, folderId: string, patch: (res: ReturnType<WriteContext['registry']['get']>, rec: Rec, values: Record<string, unknown>) => Promise<unknown>): Promise<void> {
  const files = ctx.registry.get('file');
  const folders = ctx.registry.get('documentFolder');
  let level = [folderId];
  for (let depth = 0; level.length && depth < 32; depth++) {
    for (const file of await ctx.repo.findBy(files, ctx.teamId, files.columnOf.folderId!, level, { includeTrashed: true })) {
      await patch(files, file, { folderStack: await folderStackOf(ctx, file.folderId as string) });
    }
    level = (await ctx.repo.findBy(folders, ctx.teamId, folders.columnOf.parentId!, level)).map((r) => r.id);
  }
}

/**
 * Who uploaded (spec "File": uploaderId, "null when uploaded by an agent or
 * integration"): the member, unless an OAuth app's token did it; `ownerId`
 * is the member either way (the one a private document's file belongs to).
 */
export function uploaderOf(ctx: WriteContext): { uploaderId: string | null; ownerId: string } {
  return { uploaderId: ctx.principal.via === 'oauth' ? null : ctx.principal.memberId, ownerId: ctx.principal.memberId };
}
