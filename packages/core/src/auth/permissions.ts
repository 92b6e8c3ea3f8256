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
  for (const r of registry.all()) for (const a of ACTIONS) out.push(`${r.path}:${a}`);
  for (const p of Object.keys(SPECIAL_PERMISSIONS)) out.push(p);
  return out;
}

/** Resources a client (guest) may read, and the ones it may also write. */
const CLIENT_READ = ['actors', 'members', 'portfolios', 'projects', 'statuses', 'lists', 'tasks', 'labels', 'webhooks'];
const CLIENT_WRITE = ['tasks'];
/** Resources a regular member may delete (besides reading and writing everything). */
const REGULAR_DELETE = ['tasks', 'lists', 'statuses', 'labels'];

/**
 * The permissions of the four built-in roles, derived from the catalog so a
 * resource added later is covered: owner and manager hold everything; a
 * regular member reads and writes every resource and deletes work items; a
 * client (guest) reads the project side and writes tasks.
 */
export function builtinRolePermissions(role: string, registry: Registry): string[] {
  const all = permissionCatalog(registry);
  switch (role) {
    case 'owner':
    case 'manager':
      return all;
    case 'regular':
      return all.filter((p) => p.endsWith(':read') || p.endsWith(':write') || REGULAR_DELETE.some((r) => p === `${r}:delete`));
    case 'client':
      return all.filter((p) => CLIENT_READ.some((r) => p === `${r}:read`) || CLIENT_WRITE.some((r) => p === `${r}:write`));
    default:
      return [];
  }
}
