import { z } from 'zod';
import { niceIdsStartingWith } from '../sql/queries/projects';
import { workspaceTimezone } from '../sql/queries/workspaces';
import { civil, dayFrom, localDay, zonedInstant } from '../clock/zone';
import { ProblemError } from '../errors/problem';
import { defineResource, RANGE } from './define-resource';
import { customFieldsSchema, f } from './fields';
import { fieldError, initialsOf, nextOrder, paletteColor, secondaryOf } from './rules';
import { announce, destroyDependants, insertRecord } from '../services/records';
import { DOCUMENT_TASK_LINK } from './document.resource';
import type { WriteContext } from './hooks';
import { forgetThreadTasks } from './task.resource';
import { releaseFormProject, releaseFormTargets } from './form.resource';
import { CHAT_MEMBERS, CHAT_MUTED, CHAT_OWNERS, openDiscussion, syncDiscussion } from './chat-rooms';
import { assertFolderInPortfolio } from './project-folder.resource';
import { settleStrandedHandoffs } from './task-handoff.resource';
import { customFieldsExpand, dropCustomValueIndex, indexCustomValues, lockCustomFieldsFirst, prepareCustomValuesOnCreate, prepareCustomValuesOnUpdate } from './custom-values';

export const PROJECT_MODULES = ['tasks', 'milestones', 'calendar', 'documents', 'files', 'discussion', 'forms', 'home'] as const;
/** Built-in list column keys or custom field ids, checked against the project's custom fields (resources/custom-values.ts). */
const COLUMN_KEYS = z.array(z.string().min(1).max(64)).max(250);

/** Projects (spec "Project"): top-level containers, soft-deleted. */
export const projectResource = defineResource({
  name: 'project',
  policy: { client: ['read'] },
  projectContainer: true,
  path: 'projects',
  softDelete: true,
  fields: {
    name: f.string({ trim: true, min: 1, max: 100, required: true }),
    description: f.string({ max: 100_000, nullable: true }),
    icon: f.url({ nullable: true }),
    initials: f.string({ trim: true, min: 1, max: 3 }),
    color: f.hexColor(),
    secondaryColor: f.readOnly('text'),
    portfolioId: f.ref('portfolio', { mode: 'createOnly' }),
    accessType: f.enum(['limited', 'public', 'workspace']),
    modules: f.json(z.array(z.enum(PROJECT_MODULES)).max(8), { mode: 'createOnly' }),
    defaultTasksView: f.enum(['table', 'calendar', 'swimlane', 'kanban', 'timeline', 'report'], { nullable: true }),
    hiddenListColumns: f.json(COLUMN_KEYS, { nullable: true }),
    listColumnsOrder: f.json(COLUMN_KEYS, { nullable: true }),
    customFieldsOrder: f.json(COLUMN_KEYS, { nullable: true }),
    taskCustomFieldsOrder: f.json(COLUMN_KEYS, { nullable: true }),
    listCustomFieldsOrder: f.json(COLUMN_KEYS, { nullable: true }),
    autoMilestones: f.boolean({ mode: 'createOnly' }),
    estimationUnit: f.enum(['points', 'hours', 'none'], { nullable: true }),
    hideUsersFromGuests: f.boolean(),
    subtaskStatusEnabled: f.boolean(),
    queryAllFiles: f.boolean(),
    members: f.refs('members', { target: 'member' }),
    /** The folder within the portfolio (resources/project-folder.resource.ts); null is unfiled. */
    projectFolderId: f.ref('projectFolder', { nullable: true }),
    customFields: f.json(customFieldsSchema, { nullable: true }),
    archived: f.boolean(),
    niceId: f.readOnly('text'),
    ownerId: f.readOnly('text', { nullable: true }),
    discussionChatId: f.readOnly('text', { nullable: true }),
    order: f.number(),
    taskCounter: f.readOnly('integer', { internal: true }),
  },
  filters: {
    purgeAt: { ops: ['null', 'notNull', ...RANGE] },
    name: { ops: ['eq', 'contains', 'startsWith'] },
    archived: { ops: ['eq'] },
    accessType: { ops: ['eq', 'in'] },
    projectFolderId: { ops: ['eq', 'in', 'null', 'notNull'] },
    createdAt: { ops: RANGE },
  },
  sortable: ['name', 'order'],
  defaultSort: 'order',
  hiddenByDefault: { filter: 'archived', column: 'archived', value: false },
  extraResponseFields: ['defaultStatusId'],
  expand: {
    // ownerId changes only by the transfer operation (read-only here), so its expand is declared.
    owner: { kind: 'one', target: 'member', field: 'ownerId' },
    statuses: { kind: 'children', target: 'status', field: 'projectId' },
    // Only the chat's members (the project's roster) see it; everyone else gets null.
    discussionChat: { kind: 'one', target: 'chat', field: 'discussionChatId' },
    customFields: customFieldsExpand,
  },
  hooks: {
    async beforeCreate(ctx, input) {
      if (input.archived === true) throw fieldError('archived', 'create_archived', 'a project cannot be created archived; archive it with PATCH');
      input.archived = false;
      if (input.portfolioId === undefined) {
        const general = await ctx.repo.findWhere(ctx.registry.get('portfolio'), ctx.teamId, { isGeneral: true }, { limit: 1 });
        if (!general[0]) throw new ProblemError('conflict', 'The workspace has no General portfolio');
        input.portfolioId = general[0].id;
      }
      // Lock the portfolio (a concurrent delete of it waits, or we see it gone) and the workspace
      // (niceIds are picked one project create at a time).
      const portfolio = await ctx.repo.get(ctx.registry.get('portfolio'), ctx.teamId, input.portfolioId, { lock: true });
      if (!portfolio) throw new ProblemError('resource_not_found', `portfolioId: no portfolio '${input.portfolioId}' in this workspace`, { field: 'portfolioId', id: input.portfolioId });
      await ctx.repo.lock('workspaces', ctx.teamId);
      await assertUniqueName(ctx, input.portfolioId!, input.name!);
      if (typeof input.projectFolderId === 'string') await assertFolderInPortfolio(ctx, input.projectFolderId, input.portfolioId!);
      input.accessType ??= 'limited';
      input.modules ??= [...PROJECT_MODULES];
      input.initials ??= initialsOf(input.name!);
      input.color ??= paletteColor(ctx);
      input.secondaryColor = secondaryOf(input.color);
      input.autoMilestones ??= false;
      input.hideUsersFromGuests ??= false;
      input.subtaskStatusEnabled ??= false;
      input.queryAllFiles ??= false;
      input.order ??= await nextOrder(ctx, 'project', {}, 1);
      input.ownerId = ctx.principal.memberId;
      input.taskCounter = 0;
      input.niceId = await freeNiceId(ctx, (input.initials).replace(/[^A-Za-z0-9]/g, '').toUpperCase() || 'P');
      await prepareCustomValuesOnCreate(ctx, 'project', null, input);
    },
    async lockFirst(ctx, body) {
      await lockCustomFieldsFirst(ctx, 'project', body);
    },
    async afterCreate(ctx, rec) {
      await indexCustomValues(ctx, 'project', undefined, rec);
      await insertRecord(ctx, 'status', { name: 'To do', projectId: rec.id, color: '#64748b', order: 100, archived: false });
      if (rec.autoMilestones) await createMonthlyMilestones(ctx, rec.id);
      if (rec.accessType === 'public') {
        const members = await ctx.repo.findWhere(ctx.registry.get('member'), ctx.teamId, { active: true });
        await ctx.repo.addLinks('project.members', ctx.teamId, rec.id, members.map((m) => m.id), ctx.now);
      }
      if (rec.modules.includes('discussion')) {
        const chat = await openDiscussion(ctx, rec);
        await ctx.repo.update(ctx.registry.get('project'), ctx.teamId, rec.id, { discussionChatId: chat.id });
      }
    },
    async afterLinksChange(ctx, rec, relation, added, removed) {
      if (relation === 'members') await syncDiscussion(ctx, rec, added, removed);
      // Recipients taken off the roster who can no longer open the project: their pending handoffs here are declined.
      if (relation === 'members' && removed.length) await settleStrandedHandoffs(ctx, 'projectId', [rec.id]);
    },
    async beforeUpdate(ctx, current, patch) {
      if (typeof patch.name === 'string' && patch.name !== current.name) await assertUniqueName(ctx, current.portfolioId, patch.name, current.id);
      if (typeof patch.projectFolderId === 'string') await assertFolderInPortfolio(ctx, patch.projectFolderId, current.portfolioId);
      if (typeof patch.color === 'string') patch.secondaryColor = secondaryOf(patch.color);
      await prepareCustomValuesOnUpdate(ctx, 'project', current.id, current, patch);
    },
    async afterUpdate(ctx, before, after) {
      await indexCustomValues(ctx, 'project', before, after);
      if (after.accessType !== before.accessType) await settleStrandedHandoffs(ctx, 'projectId', [after.id]);
    },
    async beforeRestore(ctx, rec) {
      const portfolio = await ctx.repo.get(ctx.registry.get('portfolio'), ctx.teamId, rec.portfolioId);
      if (!portfolio) throw new ProblemError('conflict', 'The project\'s portfolio is in the trash or gone; restore the portfolio first');
      await assertUniqueName(ctx, rec.portfolioId, rec.name, rec.id);
    },
    async beforeDestroy(ctx, rec) {
      await dropCustomValueIndex(ctx, 'project', [rec.id]);
      // Purge: a project's tasks, lists, statuses, documents (trashed ones too) and document folders go with it.
      for (const child of ['task', 'list', 'status', 'document', 'documentFolder']) {
        const res = ctx.registry.get(child);
        const rows = await ctx.repo.findBy(res, ctx.teamId, res.columnOf.projectId!, [rec.id], { includeTrashed: true });
        const ids = rows.map((r) => r.id);
        // Each row destroyed is announced, as the rows that cascade with it are (docs/not-shown.md "Purging a project"):
        // force_deleted for soft-deleting resources (destroyed for good, as their own purge says), removed for the others.
        for (const row of rows) await announce(ctx, res, row, res.softDelete ? 'force_deleted' : 'removed');
        if (child === 'task') await forgetThreadTasks(ctx, ids);
        // Attachments of documents to tasks (links the task operations write) go with either end.
        if (child === 'task' || child === 'document') {
          for (let i = 0; i < ids.length; i += 500) await ctx.repo.dropLinks({ kinds: [DOCUMENT_TASK_LINK], [child === 'task' ? 'relatedIds' : 'parentIds']: ids.slice(i, i + 500) });
        }
        if (child === 'list' || child === 'status') await releaseFormTargets(ctx, child === 'list' ? 'targetListId' : 'targetStatusId', ids);
        if (child === 'task' || child === 'list') await dropCustomValueIndex(ctx, child, ids);
        const kinds = Object.keys(res.relations ?? {}).map((r) => `${res.name}.${r}`);
        for (let i = 0; i < ids.length; i += 500) {
          await ctx.repo.dropLinks({ kinds, parentIds: ids.slice(i, i + 500) });
        }
        await destroyDependants(ctx, res, ids);
        await ctx.repo.destroy(res, ctx.teamId, ids);
      }
      // Forms are workspace-wide: they stay, without the association.
      await releaseFormProject(ctx, rec.id);
      // Files of the project (placed by projectId or folderId; those of its tasks and documents went with them), bytes queued for removal.
      const files = ctx.registry.get('file');
      const fileKinds = Object.keys(files.relations ?? {}).map((r) => `file.${r}`);
      for (const file of await ctx.repo.findBy(files, ctx.teamId, files.columnOf.projectId!, [rec.id], { includeTrashed: true })) {
        await announce(ctx, files, file, 'force_deleted');
        await files.hooks?.beforeDestroy?.(ctx, file);
        await destroyDependants(ctx, files, [file.id]);
        await ctx.repo.dropLinks({ kinds: fileKinds, parentIds: [file.id] });
        await ctx.repo.dropLinks({ kinds: ['message.files'], relatedIds: [file.id] });
        await ctx.repo.destroy(files, ctx.teamId, [file.id]);
      }
      // The discussion chat, with its messages and members.
      if (typeof rec.discussionChatId === 'string') {
        const chats = ctx.registry.get('chat');
        const chat = await ctx.repo.get(chats, ctx.teamId, rec.discussionChatId);
        if (chat) await announce(ctx, chats, chat, 'removed');
        await destroyDependants(ctx, chats, [rec.discussionChatId]);
        await ctx.repo.dropLinks({ kinds: [CHAT_MEMBERS, CHAT_OWNERS, CHAT_MUTED], parentIds: [rec.discussionChatId] });
        await ctx.repo.destroy(chats, ctx.teamId, [rec.discussionChatId]);
      }
    },
    async decorateGet(ctx, rec, out, select) {
      if (select && !select.has('defaultStatusId')) return;
      const [first] = await ctx.repo.findWhere(ctx.registry.get('status'), ctx.teamId, { projectId: rec.id, archived: false }, { orderBy: ['order'], limit: 1 });
      out.defaultStatusId = first?.id ?? null;
    },
  },
});

async function assertUniqueName(ctx: WriteContext, portfolioId: string, name: string, exceptId?: string) {
  const same = await ctx.repo.findWhere(ctx.registry.get('project'), ctx.teamId, { portfolioId, name }, { limit: 1, ...(exceptId ? { exceptId } : {}) });
  if (same.length) {
    throw new ProblemError('conflict', `A project named '${name}' already exists in this portfolio`, { field: 'name' });
  }
}

/** How many monthly milestones `autoMilestones` creates: the current month and the next 11 (docs/not-shown.md "Project autoMilestones"). */
export const AUTO_MILESTONE_MONTHS = 12;
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * Spec "Project" autoMilestones ("monthly lists created automatically;
 * applied at create"): one milestone list per calendar month of the
 * workspace's timezone, named like "March 2026", from the first instant of
 * the month to the last millisecond before the next, each with its
 * list.created event, in the project create's transaction.
 */
async function createMonthlyMilestones(ctx: WriteContext, projectId: string): Promise<void> {
  const tz = await workspaceTimezone(ctx.repo, ctx.teamId);
  const { y: year, m: month } = civil(localDay(ctx.now, tz));
  for (let i = 0; i < AUTO_MILESTONE_MONTHS; i++) {
    const y = year + Math.floor((month + i) / 12);
    const m = (month + i) % 12;
    const start = monthStart(tz, y, m);
    const end = monthStart(tz, y + Math.floor((m + 1) / 12), (m + 1) % 12) - 1;
    await insertRecord(ctx, 'list', {
      name: `${MONTH_NAMES[m]} ${y}`, projectId, description: null, start, end, order: (i + 1) * 100, color: paletteColor(ctx),
      archived: false, isMilestone: true, dependencyId: null, statusId: null, customFields: [],
    });
  }
}

/** The first instant of month `m` (0-11) of year `y` in zone `tz`. */
function monthStart(tz: string, y: number, m: number): number {
  return zonedInstant(dayFrom(y, m, 1), 0, tz);
}

async function freeNiceId(ctx: WriteContext, base: string): Promise<string> {
  const taken = await niceIdsStartingWith(ctx.repo, ctx.teamId, base);
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}${i}`)) return `${base}${i}`;
}
