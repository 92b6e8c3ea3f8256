import { z } from 'zod';
import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import { nextOrder } from './rules';
import { notFound, ProblemError } from '../errors/problem';
import { patchRecord } from '../services/records';
import type { WriteContext } from './hooks';

/*
 * Favorites and favorite folders: a member's sidebar (spec "Favorite
 * Folder"; favorites' fields are not shown: docs/not-shown.md "Favorites and
 * favorite folders"). Both are personal: private to the member who made them
 * (`privateTo` on an internal, always-true column, as reminders), so every
 * other member, whatever their role, gets 404, never lists them, and their
 * events reach only webhooks their member registered. Both are hard-deleted.
 * A favorite bookmarks one record the caller can open (`targetType` +
 * `targetId`) and goes when that record is removed for good; it may be filed
 * in one of the caller's own folders (`favoriteFolderId`, else 400
 * favorite_folder_invalid). Deleting a folder leaves its favorites unfiled.
 */

/** Spec "Favorite Folder", "Limits": a favorite folder's name is at most 30 characters. */
export const FAVORITE_FOLDER_NAME_MAX = 30;

/** What a favorite may point at: resource names (the event names), each opened by the caller through the usual rules. */
export const FAVORITE_TARGET_TYPES = [
  'portfolio', 'project', 'task', 'list', 'document', 'file', 'chat', 'projectDashboard', 'goal', 'reportChart',
] as const;

const ID = z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64);

export const favoriteFolderResource = defineResource({
  name: 'favoriteFolder',
  path: 'favorite-folders',
  // Everyone keeps a sidebar, guests too.
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write', 'delete'] },
  memberStamps: true,
  fields: {
    name: f.string({ trim: true, min: 1, max: FAVORITE_FOLDER_NAME_MAX, required: true }),
    order: f.number(),
    /** Always true: makes every folder private to `createdById` (the engine's `privateTo`). */
    personal: f.readOnly('boolean', { internal: true }),
  },
  privateTo: { field: 'personal', value: true, owner: 'createdById' },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    createdAt: { ops: RANGE },
  },
  sortable: ['order', 'name'],
  defaultSort: 'order',
  expand: { favorites: { kind: 'children', target: 'favorite', field: 'favoriteFolderId' } },
  hooks: {
    async beforeCreate(ctx, input) {
      input.personal = true;
      // Omitted: appended after the caller's last folder.
      input.order ??= await nextOrder(ctx, 'favoriteFolder', { created_by_id: ctx.principal.memberId }, 1);
    },
    async beforeDestroy(ctx, rec) {
      // Its favorites stay, unfiled (each with favorite.updated), keeping their order.
      const favorites = ctx.registry.get('favorite');
      for (const fav of await ctx.repo.findWhere(favorites, ctx.teamId, { favoriteFolderId: rec.id }, { orderBy: ['order'] })) {
        await patchRecord(ctx, favorites, fav, { favoriteFolderId: null });
      }
    },
  },
});

/** 400 favorite_folder_invalid unless `id` names a favorite folder of the caller's own (spec "Errors"). */
async function assertOwnFolder(ctx: WriteContext, id: string): Promise<void> {
  // Share-locked: a concurrent delete of the folder waits for this write (then unfiles the favorite) or has gone first (400 here).
  const folder = await ctx.repo.get(ctx.registry.get('favoriteFolder'), ctx.teamId, id, { lock: 'share' });
  if (!folder || folder.createdById !== ctx.principal.memberId) {
    throw new ProblemError('favorite_folder_invalid', `favoriteFolderId '${id.slice(0, 100)}' is not a favorite folder of yours`, { field: 'favoriteFolderId' });
  }
}

/** The favorite's target: a live record the caller can open (404 resource_not_found naming targetId, or the target's own access answer). */
async function assertTarget(ctx: WriteContext, type: string, id: string): Promise<Rec> {
  const res = ctx.registry.get(type);
  // Share-locked: a concurrent removal of the target waits for this write (then takes the favorite with it) or has gone first (404 here).
  const rec = await ctx.mustGet(res, id, 'targetId', { lock: 'share' });
  // A row the resource's own routes never serve (`unlisted`: a project's discussion chat) is not a target either: 404 as on GET.
  if (res.unlisted && rec[res.unlisted.field] === res.unlisted.value) throw notFound(res.name, id, 'targetId');
  await ctx.access.assertRecord(res, rec);
  return rec;
}

export const favoriteResource = defineResource({
  name: 'favorite',
  path: 'favorites',
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write', 'delete'] },
  fields: {
    targetType: f.enum(FAVORITE_TARGET_TYPES, { required: true, mode: 'createOnly' }),
    targetId: f.refAny('targetType', { required: true, mode: 'createOnly', onDelete: 'cascade' }),
    /** One of the caller's favorite folders, or null (unfiled). Checked by the hooks (favorite_folder_invalid), not as a plain reference. */
    favoriteFolderId: f.text(ID, { nullable: true }),
    order: f.number(),
    createdById: f.readOnly('text'),
    /** Always true: makes every favorite private to `createdById` (the engine's `privateTo`). */
    personal: f.readOnly('boolean', { internal: true }),
  },
  privateTo: { field: 'personal', value: true, owner: 'createdById' },
  filters: {
    targetType: { ops: ['eq', 'in'] },
    targetId: { ops: ['eq', 'in'] },
    favoriteFolderId: { ops: ['eq', 'in', 'null', 'notNull'] },
    createdAt: { ops: RANGE },
  },
  sortable: ['order'],
  defaultSort: 'order',
  expand: { favoriteFolder: { kind: 'one', target: 'favoriteFolder', field: 'favoriteFolderId' } },
  hooks: {
    async beforeCreate(ctx, input) {
      const me = ctx.principal.memberId;
      input.createdById = me;
      input.personal = true;
      input.favoriteFolderId ??= null;
      if (input.favoriteFolderId !== null) await assertOwnFolder(ctx, input.favoriteFolderId);
      await assertTarget(ctx, input.targetType!, input.targetId!);
      // One favorite per record and member: a member's concurrent creations take turns (Postgres; SQLite serialises writers).
      await ctx.repo.lock(ctx.registry.get('member').table, me);
      const [dup] = await ctx.repo.findWhere(ctx.registry.get('favorite'), ctx.teamId, { createdById: me, targetType: input.targetType, targetId: input.targetId }, { limit: 1 });
      if (dup) {
        throw new ProblemError('conflict', `You already have ${input.targetType} ${input.targetId} in your favorites`, { favoriteId: dup.id });
      }
      // Omitted: appended after the last favorite of the same folder (or of the unfiled ones).
      input.order ??= await nextOrder(ctx, 'favorite', { created_by_id: me, favorite_folder_id: input.favoriteFolderId }, 1);
    },
    async beforeUpdate(ctx, current, patch) {
      if (patch.favoriteFolderId === undefined) return;
      if (patch.favoriteFolderId !== null) await assertOwnFolder(ctx, patch.favoriteFolderId);
      // Moved to another folder without an order: appended there.
      if (patch.favoriteFolderId !== current.favoriteFolderId && patch.order === undefined) {
        patch.order = await nextOrder(ctx, 'favorite', { created_by_id: current.createdById, favorite_folder_id: patch.favoriteFolderId }, 1);
      }
    },
  },
});
