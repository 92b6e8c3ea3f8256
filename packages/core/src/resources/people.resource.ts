import { defineResource, RANGE } from './define-resource';
import { z } from 'zod';
import { f } from './fields';
import type { Rec, Resource } from './define-resource';
import type { WriteContext } from './hooks';
import { ProblemError } from '../errors/problem';
import { fieldError } from './rules';
import { requireHuman } from '../auth/identity';
import { retireMember } from '../sql/queries/members';
import { effectivePermissions, holds } from '../auth/roles';
import { announce, destroyDependants, destroyRows } from '../services/records';
import { settleHandoffsOf, settleStrandedHandoffs } from './task-handoff.resource';
import { clearPresenceOf } from './presence-status.resource';

/** GET /actors/{id}: who wrote a record (spec "Actor"). */
export const actorResource = defineResource({
  name: 'actor',
  policy: { client: ['read'] },
  path: 'actors',
  // Spec "Actor": ids are UUIDs, a different id space.
  uuidIds: true,
  operations: { get: true },
  fields: {
    type: f.readOnly('text'),
    displayName: f.readOnly('text'),
    memberId: f.readOnly('text', { nullable: true }),
    agentId: f.readOnly('text', { nullable: true }),
    tombstonedAt: f.readOnly('timestamp', { nullable: true }),
  },
  filters: {},
  defaultSort: 'createdAt',
  expand: { member: { kind: 'one', target: 'member', field: 'memberId' } },
});

/**
 * /members: the people of the workspace, and its agents and automations
 * (fields not shown in the spec: docs/not-shown.md "Members" and "Members
 * management"). Managed over HTTP with the `manageMembers` role permission:
 * PATCH changes the role (`roleId` or `role`) or `active`; DELETE removes
 * (trash, restore within 30 days, purged after). Created by the embedding
 * application (`api.admin.addMember`, `api.admin.createAgent`).
 */
export const memberResource = defineResource({
  name: 'member',
  path: 'members',
  softDelete: true,
  operations: { list: true, get: true, update: true, delete: true },
  policy: { regular: ['read'], client: ['read'], requires: { write: ['manageMembers'], delete: ['manageMembers'] } },
  fields: {
    userId: f.readOnly('text'),
    name: f.readOnly('text'),
    email: f.readOnly('text', { nullable: true }),
    role: f.text(z.string({ error: 'must be a role name' }).trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters')),
    roleId: f.text(z.string({ error: 'must be a role id' }).regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64)),
    active: f.boolean(),
    /** human, agent or automation (docs/not-shown.md "Agents and automations"). */
    type: f.readOnly('text'),
    /** When the person was erased (api.admin.erasePerson); never shown. An erased membership is never reactivated. */
    erasedAt: f.readOnly('timestamp', { nullable: true, internal: true }),
  },
  filters: {
    purgeAt: { ops: ['null', 'notNull', ...RANGE] },
    name: { ops: ['eq', 'contains', 'startsWith'] },
    role: { ops: ['eq', 'in'] },
    roleId: { ops: ['eq', 'in'] },
    active: { ops: ['eq'] },
    type: { ops: ['eq', 'in'] },
    createdAt: { ops: RANGE },
  },
  defaultSort: 'createdAt',
  expand: {
    roleRecord: { kind: 'one', target: 'role', field: 'roleId' },
  },
  hooks: {
    async beforeUpdate(ctx, current, patch) {
      requireHuman(ctx.principal, 'manage members');
      await assertManageable(ctx, current, patch.active === false ? 'deactivate' : 'change');
      if (patch.active === true && current.erasedAt != null && current.active !== true) {
        // Erasure is not undoable (docs/not-shown.md "Members management": Erasure).
        throw new ProblemError('conflict', 'This member was erased; an erased membership cannot be reactivated', { field: 'active', reason: 'erased' });
      }
      if (patch.role !== undefined || patch.roleId !== undefined) {
        const role = await resolveRole(ctx, patch.role, patch.roleId);
        patch.roleId = role.id;
        patch.role = String(role.name);
      }
    },
    async afterUpdate(ctx, before, after) {
      if (before.active === true && after.active === false) await releaseMember(ctx, after.id);
      // A new role may take projects away (a guest opens only their rosters' projects; viewAllProjects lost):
      // pending handoffs offered to them in those projects are declined.
      else if (after.roleId !== before.roleId) await settleStrandedHandoffs(ctx, 'toMemberId', [after.id]);
    },
    async beforeDelete(ctx, current) {
      requireHuman(ctx.principal, 'manage members');
      await assertManageable(ctx, current, 'remove');
      await releaseMember(ctx, current.id);
    },
    async beforeRestore(ctx, rec) {
      requireHuman(ctx.principal, 'manage members');
      await assertManageable(ctx, rec, 'restore');
    },
    async beforeDestroy(ctx, rec) {
      // Purged 30 days after removal: its tokens die for good, an agent's actor loses its agentId (spec "Actor").
      await retireMember(ctx.repo, ctx.registry.get('actor').table, { id: rec.id, type: rec.type, now: ctx.now });
      await releaseMember(ctx, rec.id);
      await destroyPrivateRows(ctx, rec.id);
    },
  },
});

/**
 * A member who can no longer act (deactivated, removed, erased, purged):
 * their presence status is cleared and their pending handoffs settled
 * (offered to them: declined; sent by them: withdrawn). Called with the
 * member's row locked (every path has just changed or is destroying it).
 * docs/not-shown.md "Members management".
 */
export async function releaseMember(ctx: WriteContext, memberId: string): Promise<void> {
  await clearPresenceOf(ctx, memberId);
  await settleHandoffsOf(ctx, memberId);
}

/**
 * A purged member's private rows, which nobody else sees or can remove:
 * every row of a resource declaring `privateTo` that is private to them —
 * favorites, favorite folders, reminders, private documents (trashed ones
 * too) and private dashboards, and any such resource added later — each
 * destroyed for good with its event (`force_deleted` for soft-deleting
 * resources, as their own purge says; `removed` for the others) and its
 * dependants and links, as a purge destroys a row. A resource whose rows
 * refer to another's goes first (favorites before their favorite folders),
 * so no folder has favorites left to unfile (no favorite.updated before
 * favorite.removed). docs/not-shown.md "Members management": Removing.
 */
async function destroyPrivateRows(ctx: WriteContext, memberId: string): Promise<void> {
  const all = ctx.registry.all();
  const personal = all.filter((r) => r.privateTo);
  // `o` refers to `r`: by a reference field, or as the children `r` declares (a favorite's favoriteFolderId is a plain
  // text field checked by the hooks, so the folder's `favorites` expand is what says it).
  const refersTo = (o: Resource, r: Resource) => Object.values(o.fields).some((d) => d.ref === r.name)
    || Object.values(r.expand).some((e) => e.kind === 'children' && e.target === o.name);
  const referenced = (r: Resource) => personal.some((o) => o !== r && refersTo(o, r));
  personal.sort((a, b) => Number(referenced(a)) - Number(referenced(b)));
  for (const res of personal) {
    const p = res.privateTo!;
    const column = res.columnOf[p.owner];
    if (!column) continue;
    const rows = (await ctx.repo.findBy(res, ctx.teamId, column, [memberId], { includeTrashed: true, lock: 'delete' })).filter((r) => r[p.field] === p.value);
    if (rows.length === 0) continue;
    for (const row of rows) {
      await announce(ctx, res, row, res.softDelete ? 'force_deleted' : 'removed');
      await res.hooks?.beforeDestroy?.(ctx, row);
    }
    const ids = rows.map((r) => r.id);
    await destroyDependants(ctx, res, ids);
    await destroyRows(ctx, res, ids);
  }
}

/**
 * The workspace owner's membership (the built-in owner role) and one's own
 * membership are not managed over v3: 403 permission_denied with an empty
 * missingPermissions, as no permission allows it (docs/not-shown.md). Nor is
 * a member whose current role grants permissions the caller does not hold
 * (403 permission_exceeds_caller_grant with exceedingPermissions): a
 * less-privileged manager of members cannot deactivate, remove, restore or
 * otherwise change a more-privileged one.
 */
async function assertManageable(ctx: WriteContext, current: Rec, verb: string): Promise<void> {
  if (current.id === ctx.principal.memberId) {
    throw new ProblemError('permission_denied', `A member cannot ${verb} their own membership; ask another member who holds manageMembers`, { missingPermissions: [], reason: 'self' });
  }
  if (current.role === 'owner') {
    throw new ProblemError('permission_denied', `The workspace owner cannot be demoted, deactivated or removed`, { missingPermissions: [], reason: 'workspace_owner' });
  }
  const role = typeof current.roleId === 'string' ? await ctx.repo.get(ctx.registry.get('role'), ctx.teamId, current.roleId) : undefined;
  if (!role) return;
  const mine = ctx.principal.permissions;
  const beyond = effectivePermissions(ctx.registry, role).filter((p) => !holds(mine, p));
  if (beyond.length) {
    throw new ProblemError('permission_exceeds_caller_grant', `You cannot ${verb} a member whose role grants permissions you do not hold: ${beyond.join(', ')}`, {
      exceedingPermissions: beyond,
    });
  }
}

/**
 * The role a PATCH names (`roleId`, or `role` by name; both must agree): one
 * of this workspace's roles (404 resource_not_found naming the field), not
 * the built-in owner role (400 `not_allowed`: the workspace has one owner),
 * and granting nothing the caller's own role does not (403
 * permission_exceeds_caller_grant).
 */
async function resolveRole(ctx: WriteContext, name: unknown, id: unknown): Promise<Rec> {
  const roles = ctx.registry.get('role');
  let byName: Rec | undefined;
  if (typeof name === 'string') {
    [byName] = await ctx.repo.findWhere(roles, ctx.teamId, { name }, { limit: 1 });
    if (!byName) throw new ProblemError('resource_not_found', `role: no role named '${name}' in this workspace`, { field: 'role' });
  }
  const role = typeof id === 'string' ? await ctx.mustGet(roles, id, 'roleId') : byName!;
  if (byName && byName.id !== role.id) {
    throw fieldError('role', 'mismatch', 'role and roleId name different roles; send one of them');
  }
  const field = typeof id === 'string' ? 'roleId' : 'role';
  if (!role.editable && role.name === 'owner') {
    throw fieldError(field, 'not_allowed', 'the owner role belongs to the workspace owner alone');
  }
  const mine = ctx.principal.permissions;
  const beyond = effectivePermissions(ctx.registry, role).filter((p) => !holds(mine, p));
  if (beyond.length) {
    throw new ProblemError('permission_exceeds_caller_grant', `The role grants permissions you do not hold: ${beyond.join(', ')}`, { field, exceedingPermissions: beyond });
  }
  return role;
}
