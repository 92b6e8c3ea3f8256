import { z } from 'zod';
import { ProblemError } from '../errors/problem';
import { checkName, checkPermissions, effectivePermissions, INITIAL_SCREEN_MAX, locked, reassign, ROLE_NAME_MAX, sameSet } from '../auth/roles';
import { defineResource, RANGE, type RecordOf } from './define-resource';
import { requireHuman } from '../auth/identity';
import { f } from './fields';

/**
 * Roles (spec "Role"). Custom roles are created, changed and deleted here
 * (needs `manageRoles`); the four built-in roles (`editable: false`) accept a
 * change to `initialScreen` only and show their effective permissions. The
 * permission rules live in auth/roles.ts; decisions in docs/not-shown.md.
 */
const roleFields = {
  name: f.string({ trim: true, min: 1, max: ROLE_NAME_MAX, required: true }),
  editable: f.readOnly('boolean'),
  permissions: f.json(z.array(z.string().min(1).max(100)).max(1000, 'must hold at most 1000 permission names')),
  initialScreen: f.string({ trim: true, min: 1, max: INITIAL_SCREEN_MAX, nullable: true }),
};
/** A role as its hooks see it. */
export type RoleRecord = RecordOf<typeof roleFields>;

export const roleResource = defineResource({
  name: 'role',
  policy: { requires: { write: ['manageRoles'], delete: ['manageRoles'] } },
  path: 'roles',
  fields: roleFields,
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    editable: { ops: ['eq'] },
    createdAt: { ops: RANGE },
  },
  defaultSort: 'name',
  hooks: {
    async beforeCreate(ctx, input) {
      // Who holds which rights is a human decision (docs/not-shown.md "Agents and automations": identity_rejected).
      requireHuman(ctx.principal, 'manage roles');
      await checkName(ctx, input.name!);
      input.permissions = checkPermissions(ctx, input.permissions ?? [], []);
      input.editable = true;
    },

    async beforeUpdate(ctx, current, patch) {
      requireHuman(ctx.principal, 'manage roles');
      if (!current.editable) {
        // A built-in role: initialScreen only. Sending back what was read (same name, same
        // effective permissions) is not a change.
        for (const key of Object.keys(patch) as (keyof RoleRecord)[]) {
          if (key === 'initialScreen') continue;
          const same = key === 'name' ? patch.name === current.name
            : key === 'permissions' ? sameSet(patch.permissions ?? [], effectivePermissions(ctx.registry, current))
            : false;
          if (!same) throw locked(current, `accepts a change to initialScreen only, not to ${key}`);
          delete patch[key];
        }
        return;
      }
      if (typeof patch.name === 'string') {
        if (patch.name === current.name) delete patch.name;
        else await checkName(ctx, patch.name, current.id);
      }
      if (Array.isArray(patch.permissions)) {
        patch.permissions = checkPermissions(ctx, patch.permissions, current.permissions ?? []);
      }
    },

    async afterUpdate(ctx, before, after) {
      // Members carry their role's name: a renamed role renames it on its holders.
      if (after.name === before.name) return;
      // Removed (trashed) members too: restored, they carry the role's current name.
      const holders = await ctx.repo.findBy(ctx.registry.get('member'), ctx.teamId, 'role_id', [after.id], { orderBy: 'created_at', includeTrashed: true });
      await reassign(ctx, holders, { id: after.id, name: after.name });
    },

    async beforeDelete(ctx, rec) {
      requireHuman(ctx.principal, 'manage roles');
      if (!rec.editable) throw locked(rec, 'cannot be deleted');
      // Removed (trashed) holders included: they fall back to regular like deactivated ones, so a
      // restored member never holds a deleted role (their token would no longer authenticate).
      const holders = await ctx.repo.findBy(ctx.registry.get('member'), ctx.teamId, 'role_id', [rec.id], { orderBy: 'created_at', includeTrashed: true });
      const active = holders.filter((m) => m.active && m.purgeAt == null);
      if (active.length) {
        throw new ProblemError('conflict', `${active.length} active member(s) hold the role '${rec.name}'; give them another role first`, {
          activeMemberIds: active.map((m) => m.id),
        });
      }
      const [regular] = await ctx.repo.findWhere(ctx.registry.get('role'), ctx.teamId, { name: 'regular' }, { limit: 1 });
      if (!regular) throw new ProblemError('conflict', 'The workspace has no regular role for removed members holding this role to fall back to');
      await reassign(ctx, holders, { id: regular.id, name: 'regular' });
    },

    present(ctx, rec, out) {
      if (!rec.editable && 'permissions' in out) out.permissions = [...effectivePermissions(ctx.registry, rec)];
    },
  },
});
