import { ProblemError } from '../errors/problem';
import type { Rec, ResourceHooks } from '../resources/define-resource';
import type { RoleRecord } from '../resources/people.resource';
import type { Registry } from '../resources/registry';
import type { WriteContext } from '../services/context';
import { patchRecord } from '../services/records';
import { builtinRolePermissions, permissionCatalog } from './permissions';
import { grants, type ScopeAction } from './scopes';

/** Names a custom role may not take, compared case-insensitively (spec "Role"). */
export const RESERVED_ROLE_NAMES = ['owner', 'manager', 'regular', 'client'] as const;
export const ROLE_NAME_MAX = 100;
export const INITIAL_SCREEN_MAX = 100;

const catalogs = new WeakMap<Registry, Set<string>>();
const builtins = new WeakMap<Registry, Map<string, string[]>>();

/** Every permission name a role may hold (cached per registry). */
export function catalogOf(registry: Registry): Set<string> {
  let c = catalogs.get(registry);
  if (!c) {
    c = new Set(permissionCatalog(registry));
    catalogs.set(registry, c);
  }
  return c;
}

/** What a role grants: the stored list of a custom role, the derived list of a built-in one. */
export function effectivePermissions(registry: Registry, role: Record<string, unknown>): string[] {
  if (role.editable) return Array.isArray(role.permissions) ? (role.permissions as string[]) : [];
  let byName = builtins.get(registry);
  if (!byName) {
    byName = new Map();
    builtins.set(registry, byName);
  }
  const name = String(role.name);
  let list = byName.get(name);
  if (!list) {
    list = builtinRolePermissions(name, registry);
    byName.set(name, list);
  }
  return list;
}

/** Does a permission set hold `p`? A resource permission `x:write` also holds `x:read` (as scopes do). */
export function holds(permissions: ReadonlySet<string>, p: string): boolean {
  const m = /^(.+):(read|write|delete)$/.exec(p);
  return m ? grants(permissions, m[1]!, m[2] as ScopeAction) : permissions.has(p);
}

function nameError(code: string, message: string): ProblemError {
  return new ProblemError('validation_failed', `name: ${message}`, { errors: [{ field: 'name', code, message }] });
}

/** Reserved names (400) and a name another role of the workspace already has, in any case (409). */
async function checkName(ctx: WriteContext, name: string, exceptId?: string): Promise<void> {
  if ((RESERVED_ROLE_NAMES as readonly string[]).includes(name.toLowerCase())) {
    throw nameError('reserved_name', `'${name}' is reserved for a built-in role`);
  }
  // One role write at a time per workspace, so two clients cannot both take a name.
  await ctx.repo.lock('workspaces', ctx.teamId);
  let q = ctx.db.selectFrom('roles').select(['id', 'name']).where('team_id', '=', ctx.teamId)
    .where((eb) => eb(ctx.repo.dialect.fold(eb.ref('name')), '=', name.toLowerCase()));
  if (exceptId) q = q.where('id', '!=', exceptId);
  const clash = await q.executeTakeFirst();
  if (clash) {
    throw new ProblemError('conflict', `A role named '${clash.name as string}' already exists in this workspace`, { field: 'name', id: clash.id });
  }
}

/**
 * Validate a permission list: names deduplicated (first occurrence kept); every
 * name in the catalog (else 400 validation_failed naming the unknown ones); the
 * names added (all of them on create, the delta on update) held by the caller's
 * role (else 403 permission_exceeds_caller_grant).
 */
function checkPermissions(ctx: WriteContext, sent: string[], before: readonly string[]): string[] {
  const list = [...new Set(sent)];
  const catalog = catalogOf(ctx.registry);
  const unknown = list.filter((p) => !catalog.has(p));
  if (unknown.length) {
    throw new ProblemError('validation_failed', `Unknown permission name(s): ${unknown.join(', ')}`, {
      errors: unknown.map((p) => ({ field: 'permissions', code: 'unknown_permission', message: `'${p}' is not a permission name` })),
      unknownPermissions: unknown,
    });
  }
  const had = new Set(before);
  const exceeding = list.filter((p) => !had.has(p) && !holds(ctx.principal.permissions, p));
  if (exceeding.length) {
    throw new ProblemError('permission_exceeds_caller_grant', `You cannot grant permissions you do not hold: ${exceeding.join(', ')}`, {
      exceedingPermissions: exceeding,
    });
  }
  return list;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const s = new Set(a);
  return s.size === new Set(b).size && b.every((x) => s.has(x));
}

function locked(role: Rec, what: string): ProblemError {
  return new ProblemError('default_role_locked', `The built-in role '${role.name as string}' ${what}`, { roleId: role.id });
}

/** Move members holding `role` to another role, one `member.updated` event each. */
async function reassign(ctx: WriteContext, holders: Rec[], to: { id: string; name: string }): Promise<void> {
  const members = ctx.registry.get('member');
  for (const m of holders) await patchRecord(ctx, members, m, { roleId: to.id, role: to.name });
}

/** The hooks of `roleResource`. */
export const roleHooks: ResourceHooks<RoleRecord> = {
  async beforeCreate(ctx, input) {
    await checkName(ctx, input.name!);
    input.permissions = checkPermissions(ctx, input.permissions ?? [], []);
    input.editable = true;
  },

  async beforeUpdate(ctx, current, patch) {
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
    const holders = await ctx.repo.findBy(ctx.registry.get('member'), ctx.teamId, 'role_id', [after.id], { orderBy: 'created_at' });
    await reassign(ctx, holders, { id: after.id, name: after.name });
  },

  async beforeDelete(ctx, rec) {
    if (!rec.editable) throw locked(rec, 'cannot be deleted');
    const holders = await ctx.repo.findBy(ctx.registry.get('member'), ctx.teamId, 'role_id', [rec.id], { orderBy: 'created_at' });
    const active = holders.filter((m) => m.active);
    if (active.length) {
      throw new ProblemError('conflict', `${active.length} active member(s) hold the role '${rec.name}'; give them another role first`, {
        activeMemberIds: active.map((m) => m.id),
      });
    }
    const regular = await ctx.db.selectFrom('roles').select(['id', 'name']).where('team_id', '=', ctx.teamId)
      .where('name', '=', 'regular').executeTakeFirst();
    if (!regular) throw new ProblemError('conflict', 'The workspace has no regular role for removed members holding this role to fall back to');
    await reassign(ctx, holders, { id: regular.id as string, name: regular.name as string });
  },

  present(ctx, rec, out) {
    if (!rec.editable && 'permissions' in out) out.permissions = [...effectivePermissions(ctx.registry, rec)];
  },
};

