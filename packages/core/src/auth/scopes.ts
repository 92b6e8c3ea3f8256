/** The coarse macros (spec "Authentication" rule 4). */
export const SCOPE_MACROS = ['read', 'write', 'delete'] as const;
export type ScopeAction = 'read' | 'write' | 'delete';

/**
 * Does a token's scope set grant `<resource>:<action>`? `write` implies
 * `read`; the macros `read`, `write` and `delete` cover every resource.
 */
export function grants(scopes: ReadonlySet<string>, resource: string, action: ScopeAction): boolean {
  if (scopes.has(`${resource}:${action}`) || scopes.has(action)) return true;
  if (action === 'read') return scopes.has(`${resource}:write`) || scopes.has('write');
  return false;
}

const SCOPE_RE = /^(read|write|delete|[a-z][a-z-]*:(read|write|delete))$/;

export function isValidScope(s: string): boolean {
  return SCOPE_RE.test(s);
}
