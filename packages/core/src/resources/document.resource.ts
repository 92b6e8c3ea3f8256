import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import type { WriteContext } from './hooks';
import { fieldError, nextOrder } from './rules';
import { ProblemError } from '../errors/problem';
import { patchRecord } from '../services/records';
import { folderStackOf, refreshFolderStacks } from './file.resource';

/*
 * Documents and document folders (spec "Other resources": fields not shown,
 * except that a document's accessType cannot change after creation and its
 * body is settable at creation and afterwards only extended by the append
 * operation). Every decision taken here: docs/not-shown.md "Documents".
 */

export const DOCUMENT_TITLE_MAX = 255;
/** Longest document body, in characters (the append and edit-text operations keep it within this). */
export const DOCUMENT_BODY_MAX = 1_000_000;
export const DOCUMENT_ACCESS_TYPES = ['project', 'private'] as const;
export const FOLDER_NAME_MAX = 255;
/** Deepest folder nesting (a root folder is depth 1). */
export const FOLDER_DEPTH_MAX = 16;
/**
 * The links that attach documents to tasks (the task.attachDocument and
 * task.detachDocument operations): parent the document, related the task.
 * Not a declared relation, so it has no sub-routes and no membership events
 * beyond the catalog; documents filter on it (`taskId[eq|in]`).
 */
export const DOCUMENT_TASK_LINK = 'document.tasks';

/** A folder of the same project as the row placed in it, or 400 validation_failed `wrong_project` naming the field. */
async function folderOfProject(ctx: WriteContext, field: string, folderId: string, projectId: unknown): Promise<Rec> {
  const folder = await ctx.mustGet('documentFolder', folderId, field);
  if (folder.projectId !== projectId) throw fieldError(field, 'wrong_project', 'must be a folder of the same project');
  return folder;
}

/** Documents: Markdown pages of a project, optionally in a folder; soft-deleted. */
export const documentResource = defineResource({
  name: 'document',
  path: 'documents',
  softDelete: true,
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    title: f.string({ trim: true, min: 1, max: DOCUMENT_TITLE_MAX, required: true }),
    // Served only by GET /documents/{id} (like a project's defaultStatusId): a page of
    // 200 documents, an expand or a webhook payload (1 MiB cap) never carries bodies.
    body: f.string({ max: DOCUMENT_BODY_MAX, mode: 'createOnly', internal: true }),
    projectId: f.ref('project', { mode: 'createOnly' }),
    folderId: f.ref('documentFolder', { nullable: true }),
    accessType: f.enum(DOCUMENT_ACCESS_TYPES, { mode: 'createOnly' }),
    createdById: f.readOnly('text', { nullable: true }),
  },
  extraResponseFields: ['body'],
  projectField: 'projectId',
  listParams: { projectId: {} },
  privateTo: { field: 'accessType', value: 'private', owner: 'createdById' },
  filters: {
    purgeAt: { ops: ['null', 'notNull', ...RANGE] },
    title: { ops: ['eq', 'contains', 'startsWith'] },
    accessType: { ops: ['eq', 'in'] },
    createdById: { ops: ['eq', 'in'] },
    taskId: { ops: ['eq', 'in'], links: DOCUMENT_TASK_LINK },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  sortable: ['title'],
  defaultSort: '-updatedAt',
  expand: {
    folder: { kind: 'one', target: 'documentFolder', field: 'folderId' },
    createdBy: { kind: 'one', target: 'member', field: 'createdById' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      if (typeof input.projectId !== 'string') throw new ProblemError('project_not_specified', 'A document needs a projectId');
      input.body ??= '';
      input.accessType ??= 'project';
      input.createdById = ctx.principal.memberId;
      if (typeof input.folderId === 'string') await folderOfProject(ctx, 'folderId', input.folderId, input.projectId);
    },
    async beforeUpdate(ctx, current, patch) {
      if (typeof patch.folderId === 'string' && patch.folderId !== current.folderId) await folderOfProject(ctx, 'folderId', patch.folderId, current.projectId);
    },
    async beforeDestroy(ctx, rec) {
      await ctx.repo.dropLinks({ kinds: [DOCUMENT_TASK_LINK], parentIds: [rec.id] });
    },
    decorateGet(_ctx, rec, out, select) {
      if (!select || select.has('body')) out.body = rec.body ?? '';
    },
  },
});

/**
 * Document folders: a tree per project (`parentId`, at most
 * {@link FOLDER_DEPTH_MAX} deep, never a cycle); hard-deleted, and a deleted
 * folder's documents and subfolders move up to its parent. Not in the event
 * catalog (spec "Lifecycle resources" does not list them).
 */
export const documentFolderResource = defineResource({
  name: 'documentFolder',
  path: 'document-folders',
  events: false,
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    name: f.string({ trim: true, min: 1, max: FOLDER_NAME_MAX, required: true }),
    projectId: f.ref('project', { mode: 'createOnly' }),
    parentId: f.ref('documentFolder', { nullable: true }),
    order: f.number(),
  },
  projectField: 'projectId',
  listParams: { projectId: {} },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    parentId: { ops: ['eq', 'in', 'null', 'notNull'] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  sortable: ['order', 'name'],
  defaultSort: 'order',
  defaultSortWithoutProject: '-updatedAt',
  expand: {
    parent: { kind: 'one', target: 'documentFolder', field: 'parentId' },
    folders: { kind: 'children', target: 'documentFolder', field: 'parentId' },
    documents: { kind: 'children', target: 'document', field: 'folderId' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      if (typeof input.projectId !== 'string') throw new ProblemError('project_not_specified', 'A document folder needs a projectId');
      if (typeof input.parentId === 'string') await checkPlacement(ctx, undefined, input.parentId, input.projectId);
      input.order ??= await nextOrder(ctx, 'documentFolder', { project_id: input.projectId, parent_id: input.parentId ?? null }, 1);
    },
    async beforeUpdate(ctx, current, patch) {
      if (typeof patch.parentId === 'string' && patch.parentId !== current.parentId) await checkPlacement(ctx, current, patch.parentId, current.projectId);
    },
    async afterUpdate(ctx, before, after) {
      // Files below a moved folder carry its new path.
      if (after.parentId !== before.parentId) await refreshFolderStacks(ctx, after.id, (res, rec, values) => patchRecord(ctx, res, rec, values));
    },
    async beforeDestroy(ctx, rec) {
      // Nothing is lost with a folder: what it held moves up to its parent (trashed documents and files too).
      const up = { folderId: rec.parentId ?? null };
      const docs = ctx.registry.get('document');
      for (const d of await ctx.repo.findBy(docs, ctx.teamId, docs.columnOf.folderId!, [rec.id], { includeTrashed: true })) await patchRecord(ctx, docs, d, up);
      const files = ctx.registry.get('file');
      const upStack = await folderStackOf(ctx, rec.parentId);
      for (const file of await ctx.repo.findBy(files, ctx.teamId, files.columnOf.folderId!, [rec.id], { includeTrashed: true })) {
        await patchRecord(ctx, files, file, { ...up, folderStack: upStack });
      }
      const folders = ctx.registry.get('documentFolder');
      for (const sub of await ctx.repo.findBy(folders, ctx.teamId, folders.columnOf.parentId!, [rec.id])) {
        await patchRecord(ctx, folders, sub, { parentId: rec.parentId ?? null });
        await refreshFolderStacks(ctx, sub.id, (res, r, values) => patchRecord(ctx, res, r, values));
      }
    },
  },
});

/**
 * A folder may sit under `parentId` when that folder is of the same project,
 * is not the folder itself or one of its descendants (400 `folder_cycle`),
 * and the resulting tree is at most {@link FOLDER_DEPTH_MAX} deep (400 `too_deep`).
 */
async function checkPlacement(ctx: WriteContext, folder: Rec | undefined, parentId: string, projectId: unknown): Promise<void> {
  let node: Rec | undefined = await folderOfProject(ctx, 'parentId', parentId, projectId);
  let depth = 1;
  while (node) {
    if (folder && node.id === folder.id) throw fieldError('parentId', 'folder_cycle', 'must not be the folder itself or one of its subfolders');
    depth++;
    node = typeof node.parentId === 'string' ? await ctx.repo.get(ctx.registry.get('documentFolder'), ctx.teamId, node.parentId) : undefined;
  }
  // Depth of the folder's own subtree below it counts too when it moves.
  const below = folder ? await subtreeHeight(ctx, folder.id) : 0;
  if (depth + below > FOLDER_DEPTH_MAX) throw fieldError('parentId', 'too_deep', `folders nest at most ${FOLDER_DEPTH_MAX} deep`);
}

/** How many levels of subfolders lie below a folder (0 for a leaf); one query per level. */
async function subtreeHeight(ctx: WriteContext, id: string): Promise<number> {
  const folders = ctx.registry.get('documentFolder');
  let level = [id];
  let height = 0;
  while (level.length && height <= FOLDER_DEPTH_MAX) {
    level = (await ctx.repo.findBy(folders, ctx.teamId, folders.columnOf.parentId!, level)).map((r) => r.id);
    if (level.length) height++;
  }
  return height;
}
