import type { Registry } from '../resources/registry';

/**
 * Role permissions that are not a resource action (names not shown in the
 * spec; docs/not-shown.md). Resource permissions are spelled like scopes:
 * `tasks:read`, `tasks:write`, `tasks:delete` (write implies read).
 */
export const SPECIAL_PERMISSIONS = {
  manageWebhooks: 'create, update, delete and restore webhooks',
  viewTimeReports: "read every member's time entries, not only one's own",
  manageRoles: 'create, update and delete custom roles',
  manageMembers: 'invite, change and deactivate members',
  viewAllProjects: 'open every project of the workspace, whatever its access type',
} as const;
export type SpecialPermission = keyof typeof SPECIAL_PERMISSIONS;

const ACTIONS = ['read', 'write', 'delete'] as const;

/** Every permission name a role may hold: one per resource and action, plus the special ones. */
export function permissionCatalog(registry: Registry): string[] {
  const out: string[] = [];
  for (const r of registry.roleResources()) for (const a of ACTIONS) out.push(`${r.path}:${a}`);
  for (const p of Object.keys(SPECIAL_PERMISSIONS)) out.push(p);
  return out;
}

const REGULAR_DEFAULT = ['read', 'write'] as const;

/**
 * The permissions of the four built-in roles, from each resource's declared
 * policy (`policy.regular`, `policy.client`), so a resource added later is
 * covered by its own declaration: owner and manager hold everything; a
 * regular member reads and writes every resource (and deletes where declared);
 * a client (guest) holds only what a resource grants it.
 */
export function builtinRolePermissions(role: string, registry: Registry): string[] {
  if (role === 'owner' || role === 'manager') return permissionCatalog(registry);
  if (role !== 'regular' && role !== 'client') return [];
  const out: string[] = [];
  for (const r of registry.roleResources()) {
    const actions = role === 'regular' ? r.policy?.regular ?? REGULAR_DEFAULT : r.policy?.client ?? [];
    for (const a of ACTIONS) if (actions.includes(a)) out.push(`${r.path}:${a}`);
  }
  return out;
}

/** Role permissions a standard operation needs beyond its scope, as the resource declares them. */
export function requiredPermissions(registry: Registry, resourcePath: string, action: (typeof ACTIONS)[number]): readonly string[] {
  return registry.byPath.get(resourcePath)?.policy?.requires?.[action] ?? [];
}
