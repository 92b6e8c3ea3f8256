import type { Registry } from '../resources/registry';
import { SCOPE_MACROS, type ScopeAction } from '../auth/scopes';
import { holds } from '../auth/roles';

const ACTIONS: readonly ScopeAction[] = ['read', 'write', 'delete'];

/** Every scope the server advertises (RFC 8414 `scopes_supported`): each resource's three actions, then the macros. */
export function supportedScopes(registry: Registry): string[] {
  const out: string[] = [];
  for (const r of registry.roleResources()) for (const a of ACTIONS) out.push(`${r.path}:${a}`);
  return [...out, ...SCOPE_MACROS];
}

/** Split a space-delimited scope parameter (RFC 6749 §3.3); undefined when a token is not advertised. */
export function parseScope(registry: Registry, raw: string): string[] | undefined {
  const supported = new Set(supportedScopes(registry));
  const list = raw.split(' ').filter((s) => s !== '');
  if (list.length === 0 || list.some((s) => !supported.has(s))) return undefined;
  return [...new Set(list)];
}

/**
 * Expand scopes to fine-grained ones: macros to every resource, and `x:write`
 * also to `x:read` (write implies read). The result is a set of
 * `<resource>:<action>` that can be intersected exactly.
 */
export function expandScopes(registry: Registry, scopes: readonly string[]): Set<string> {
  const out = new Set<string>();
  const resources = registry.roleResources().map((r) => r.path);
  for (const s of scopes) {
    if ((SCOPE_MACROS as readonly string[]).includes(s)) {
      for (const r of resources) {
        out.add(`${r}:${s}`);
        if (s === 'write') out.add(`${r}:read`);
      }
    } else {
      out.add(s);
      if (s.endsWith(':write')) out.add(`${s.slice(0, -':write'.length)}:read`);
    }
  }
  return out;
}

/**
 * The role clamp (spec "Scopes"): the fine-grained scopes of `ceiling` that
 * the member's role permissions also grant, in catalog order.
 */
export function clampScopes(registry: Registry, ceiling: readonly string[], permissions: ReadonlySet<string>): string[] {
  const wanted = expandScopes(registry, ceiling);
  const out: string[] = [];
  for (const s of supportedScopes(registry)) if (wanted.has(s) && holds(permissions, s)) out.push(s);
  return out;
}

/** The coarse summary of a token response's `scope` (spec "Token response"): the actions present, among read, write, delete. */
export function coarseSummary(scopes: readonly string[]): string {
  const actions = new Set(scopes.map((s) => s.slice(s.lastIndexOf(':') + 1)));
  return ACTIONS.filter((a) => actions.has(a)).join(' ');
}

/** Human words for a consent screen: one line per resource. */
export function describeScopes(scopes: readonly string[]): string[] {
  const byResource = new Map<string, Set<string>>();
  for (const s of scopes) {
    const i = s.lastIndexOf(':');
    const r = s.slice(0, i);
    if (!byResource.has(r)) byResource.set(r, new Set());
    byResource.get(r)!.add(s.slice(i + 1));
  }
  const lines: string[] = [];
  for (const [r, actions] of byResource) {
    const words = r.replace(/-/g, ' ');
    const verbs = [actions.has('read') && 'see', actions.has('write') && 'create and change', actions.has('delete') && 'delete'].filter(Boolean) as string[];
    const phrase = verbs.length > 1 ? `${verbs.slice(0, -1).join(', ')} and ${verbs[verbs.length - 1]}` : verbs[0]!;
    lines.push(`${phrase[0]!.toUpperCase()}${phrase.slice(1)} ${words}`);
  }
  return lines;
}
