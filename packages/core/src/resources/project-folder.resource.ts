import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import { nextOrder } from './rules';
import { ProblemError } from '../errors/problem';
import { patchRecord } from '../services/records';
import type { WriteContext } from './hooks';

/*
 * Project folders (spec "Project": `projectFolderId`, "folder within the
 * portfolio; null is unfiled"; "Other resources": fields not shown). A folder
 * groups projects inside one portfolio: `name` (unique within the portfolio),
 * `portfolioId` (set once; the General portfolio when omitted) and a
 * fractional `order` (appended when omitted). Hard-deleted: deleting a folder
 * unfiles its projects (projectFolderId null, project.updated each). Purging
 * its portfolio removes it. Every decision: docs/not-shown.md "Project folders".
 */

/** Longest folder name (same as a project's, spec "Limits"). */
export const PROJECT_FOLDER_NAME_MAX = 100;

export const projectFolderResource = defineResource({
  name: 'projectFolder',
  path: 'project-folders',
  // Like projects: regular members organise folders; guests only read them.
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    name: f.string({ trim: true, min: 1, max: PROJECT_FOLDER_NAME_MAX, required: true }),
    portfolioId: f.ref('portfolio', { mode: 'createOnly', onDelete: 'cascade' }),
    order: f.number(),
  },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    createdAt: { ops: RANGE },
  },
  sortable: ['name', 'order'],
  defaultSort: 'order',
  hooks: {
    async beforeCreate(ctx, input) {
      if (input.portfolioId === undefined) {
        const general = await ctx.repo.findWhere(ctx.registry.get('portfolio'), ctx.teamId, { isGeneral: true }, { limit: 1 });
        if (!general[0]) throw new ProblemError('conflict', 'The workspace has no General portfolio');
        input.portfolioId = general[0].id;
      }
      await lockPortfolio(ctx, input.portfolioId!);
      await assertUniqueName(ctx, input.portfolioId!, input.name!);
      input.order ??= await nextOrder(ctx, 'projectFolder', { portfolio_id: input.portfolioId }, 1);
    },
    async beforeUpdate(ctx, current, patch) {
      if (typeof patch.name === 'string' && patch.name !== current.name) {
        await lockPortfolio(ctx, current.portfolioId);
        await assertUniqueName(ctx, current.portfolioId, patch.name, current.id);
      }
    },
    async beforeDestroy(ctx, rec) {
      // Unfile its projects (trashed ones too, so a restored project is not filed in a folder that is gone).
      const projects = ctx.registry.get('project');
      const filed = await ctx.repo.findBy(projects, ctx.teamId, projects.columnOf.projectFolderId!, [rec.id], { includeTrashed: true });
      for (const p of filed) await patchRecord(ctx, projects, p, { projectFolderId: null });
    },
  },
});

/**
 * Folder creates and renames of one portfolio take turns: its row is locked
 * (`update`, so writes merely referencing the portfolio are not held up)
 * until the transaction ends. Two concurrent creates or renames to one name
 * cannot both pass the name check, and concurrent appends get distinct
 * orders. The unique index on (portfolio_id, name) (migration 0023) backs the
 * check for any other writer.
 */
async function lockPortfolio(ctx: WriteContext, portfolioId: string): Promise<void> {
  await ctx.repo.lock(ctx.registry.get('portfolio').table, portfolioId);
}

async function assertUniqueName(ctx: WriteContext, portfolioId: string, name: string, exceptId?: string) {
  const same = await ctx.repo.findWhere(ctx.registry.get('projectFolder'), ctx.teamId, { portfolioId, name }, { limit: 1, ...(exceptId ? { exceptId } : {}) });
  if (same.length) throw new ProblemError('conflict', `A project folder named '${name}' already exists in this portfolio`, { field: 'name' });
}

/**
 * 400 validation_failed on `projectFolderId` unless the folder (already
 * known to exist in the workspace) lies in the project's portfolio.
 */
export async function assertFolderInPortfolio(ctx: WriteContext, folderId: string, portfolioId: string): Promise<void> {
  const folder = await ctx.repo.get(ctx.registry.get('projectFolder'), ctx.teamId, folderId);
  if (folder && folder.portfolioId !== portfolioId) {
    throw new ProblemError('validation_failed', 'projectFolderId: the folder belongs to another portfolio', {
      errors: [{ field: 'projectFolderId', code: 'folder_portfolio_mismatch', message: "must be a folder of the project's portfolio" }],
    });
  }
}
