import type { Resource } from '../resources/define-resource';
import { snakeCase } from '../resources/fields';
import type { OpResult } from './v3';
import { v3Shape } from './v3';

/*
 * The legacy v1.0 presenter (spec "Legacy v1.0 endpoints", "Errors",
 * "Versioning"): how the outcomes of the same operations v3 runs look on
 * /api/v1.0. Shapes are data derived from the v3 shapes (snake_case of the
 * v3 field names), except the three the spec shows: subteams, labels, apps.
 * Every decision the spec leaves open: docs/not-shown.md "Legacy v1.0 surface".
 */

/** Mount point of the legacy surface. */
export const LEGACY_PREFIX = '/api/v1.0';

/** Spec "Versioning": the retirement date, as the Sunset header states it. */
export const LEGACY_SUNSET = 'Wed, 01 Sep 2027 00:00:00 GMT';

/** Where the `Link` header of every legacy answer points: the versioning information under the docs. */
export function legacyDeprecationLink(docsBaseUrl: string): string {
  return `<${docsBaseUrl.replace(/\/$/, '')}/versioning>; rel="deprecation"`;
}

/** The three headers every legacy answer carries, errors included. */
export function legacyHeaders(docsBaseUrl: string): Record<string, string> {
  return { deprecation: 'true', sunset: LEGACY_SUNSET, link: legacyDeprecationLink(docsBaseUrl) };
}

/** Longest `message` of a legacy error body (like a v3 problem's `detail`). */
const MESSAGE_MAX = 1024;

/** The legacy error body (spec "Errors"): exactly `{message, code}`, code mirroring the HTTP status. */
export function legacyErrorBody(status: number, message: string): { message: string; code: number } {
  return { message: message.length <= MESSAGE_MAX ? message : `${message.slice(0, MESSAGE_MAX)}…`, code: status };
}

/** A write's answer: `{message, id}` (201 for creates and leave, else 200). */
export function legacyWrite(status: 200 | 201, message: string, id: string): OpResult {
  return { status, body: { message, id } };
}

/**
 * The legacy form of any record: the v3 shape's fields (stored columns and
 * relation id sets, never computed or expanded ones), keys in snake_case,
 * values as v3 shows them.
 */
export function legacyRecord(res: Resource, v3: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of v3Shape(res)) out[snakeCase(f.name)] = v3[f.name] ?? null;
  return out;
}

/** The field names of {@link legacyRecord} for a resource. */
export function legacyFieldNames(res: Resource): string[] {
  return v3Shape(res).map((f) => snakeCase(f.name));
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * A legacy portfolio (spec "Legacy portfolio"): all nine fields, always
 * present and never null (a missing icon or owner is ""; members an array).
 */
export function subteamOf(p: Record<string, unknown>): Record<string, unknown> {
  return {
    id: str(p.id),
    name: str(p.name),
    initials: str(p.initials),
    logo: str(p.icon),
    color: str(p.color),
    secondary_color: str(p.secondaryColor),
    is_general: p.isGeneral === true,
    owner: str(p.ownerId),
    members: Array.isArray(p.members) ? (p.members as unknown[]).map(String) : [],
  };
}

/** A legacy label (spec "Legacy label (tag)"): id, name, color, type, created_by, team, default. */
export function labelOf(l: Record<string, unknown>, teamId: string, createdBy: string): Record<string, unknown> {
  return {
    id: str(l.id),
    name: str(l.name),
    color: str(l.color),
    type: l.type === 1 ? 1 : 0,
    created_by: createdBy,
    team: teamId,
    default: l.isDefault === true,
  };
}

/**
 * The legacy app scope enum (spec "Legacy app": file, label, doc, milestone,
 * message, subtask, project, task_group) by the v3 scope resource each stands
 * for: milestones are lists, task groups are statuses (board columns), subtasks are tasks.
 */
export const APP_SCOPE_OF: Readonly<Record<string, string>> = {
  files: 'file',
  labels: 'label',
  documents: 'doc',
  lists: 'milestone',
  messages: 'message',
  tasks: 'subtask',
  projects: 'project',
  statuses: 'task_group',
};
const APP_SCOPE_ORDER = ['file', 'label', 'doc', 'milestone', 'message', 'subtask', 'project', 'task_group'];
const MACROS = new Set(['read', 'write', 'delete']);

/** The legacy scopes of a set of v3 scopes, space-separated in the enum's order: a macro covers every value. */
export function appScopes(v3Scopes: Iterable<string>): string {
  const got = new Set<string>();
  for (const s of v3Scopes) {
    if (MACROS.has(s)) return APP_SCOPE_ORDER.join(' ');
    const legacy = APP_SCOPE_OF[s.split(':')[0]!];
    if (legacy) got.add(legacy);
  }
  return APP_SCOPE_ORDER.filter((s) => got.has(s)).join(' ');
}

/** A legacy app (spec "Legacy app"): an OAuth client as the legacy surface shows it. */
export function appOf(c: { id: string; name: string; redirectUris: readonly string[]; createdAt: string }, scopes: string): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    logo: '',
    redirect_urls: c.redirectUris.join(' '),
    description: '',
    scopes,
    created_by: '',
    created_at: c.createdAt,
    updated_at: c.createdAt,
  };
}
