import { ProblemError } from '../errors/problem';
import type { Rec } from '../resources/define-resource';
import type { Registry } from '../resources/registry';
import type { WriteContext } from '../services/context';
import { patchRecord } from '../services/records';
import { roleNamedAlike } from '../sql/queries/roles';
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
export async function checkName(ctx: WriteContext, name: string, exceptId?: string): Promise<void> {
  if ((RESERVED_ROLE_NAMES as readonly string[]).includes(name.toLowerCase())) {
    throw nameError('reserved_name', `'${name}' is reserved for a built-in role`);
  }
  // One role write at a time per workspace, so two clients cannot both take a name.
  await ctx.repo.lock('workspaces', ctx.teamId);
  const clash = await roleNamedAlike(ctx.db, ctx.repo.dialect, ctx.teamId, name, exceptId);
  if (clash) {
    throw new ProblemError('conflict', `A role named '${clash.name}' already exists in this workspace`, { field: 'name', id: clash.id });
  }
}

/**
 * Validate a permission list: names deduplicated (first occurrence kept); every
 * name in the catalog (else 400 validation_failed naming the unknown ones); the
 * names added (all of them on create, the delta on update) held by the caller's
 * role (else 403 permission_exceeds_caller_grant).
 */
export function checkPermissions(ctx: WriteContext, sent: string[], before: readonly string[]): string[] {
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

export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const s = new Set(a);
  return s.size === new Set(b).size && b.every((x) => s.has(x));
}

export function locked(role: Rec, what: string): ProblemError {
  return new ProblemError('default_role_locked', `The built-in role '${role.name as string}' ${what}`, { roleId: role.id });
}

/** Move members holding `role` to another role, one `member.updated` event each. */
export async function reassign(ctx: WriteContext, holders: Rec[], to: { id: string; name: string }): Promise<void> {
  const members = ctx.registry.get('member');
  for (const m of holders) await patchRecord(ctx, members, m, { roleId: to.id, role: to.name });
}
