import type { OpResult } from './v3';

/*
 * The legacy v1.0 presenter (spec "Legacy v1.0 endpoints", "Errors",
 * "Versioning"): how the outcomes of the same operations v3 runs look on
 * /api/v1.0. Every shape is pinned (the surface is frozen): the three the
 * spec shows (subteams, labels, apps) and the read endpoints' field lists.
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
 * The fields of the legacy read endpoints (`GET /tasks`, `/projects`, `/docs`,
 * `/members` and their `/{id}`), pinned: the surface is frozen (spec
 * "Versioning": no new fields), so a field v3 gains never appears here. Each
 * is the v3 field of the same name in camelCase (`project_id` ← `projectId`),
 * its value as v3 shows it (null when v3 has none). The list is the v3 shape
 * (stored columns and relation id sets) as it was when the surface was frozen.
 */
export const LEGACY_READ_FIELDS: Readonly<Record<LegacyReadSegment, readonly string[]>> = {
  tasks: [
    'id', 'created_at', 'updated_at', 'created_by_actor_id', 'updated_by_actor_id', 'created_by_actor_type', 'updated_by_actor_type',
    'name', 'project_id', 'description', 'archived', 'archived_at', 'archived_by_id', 'completed', 'completed_at', 'completed_by_id',
    'list_id', 'status_id', 'parent_task_id', 'dependency_id', 'recurring_rule_id', 'start_at', 'due_at', 'remind_at', 'story_points',
    'estimate', 'order', 'order_list', 'banner', 'embed_url', 'custom_fields', 'nice_id', 'created_by_id', 'assignees', 'labels',
    'subscribers', 'connected_tasks', 'hidden_for',
  ],
  projects: [
    'id', 'created_at', 'updated_at', 'created_by_actor_id', 'updated_by_actor_id', 'created_by_actor_type', 'updated_by_actor_type',
    'purge_at', 'deleted_by_id', 'name', 'description', 'icon', 'initials', 'color', 'secondary_color', 'portfolio_id', 'access_type',
    'modules', 'default_tasks_view', 'hidden_list_columns', 'list_columns_order', 'custom_fields_order', 'task_custom_fields_order',
    'list_custom_fields_order', 'auto_milestones', 'estimation_unit', 'hide_users_from_guests', 'subtask_status_enabled',
    'query_all_files', 'project_folder_id', 'custom_fields', 'archived', 'nice_id', 'owner_id', 'discussion_chat_id', 'order', 'members',
  ],
  docs: [
    'id', 'created_at', 'updated_at', 'created_by_actor_id', 'updated_by_actor_id', 'created_by_actor_type', 'updated_by_actor_type',
    'purge_at', 'deleted_by_id', 'title', 'project_id', 'folder_id', 'access_type', 'created_by_id',
  ],
  members: [
    'id', 'created_at', 'updated_at', 'created_by_actor_id', 'updated_by_actor_id', 'created_by_actor_type', 'updated_by_actor_type',
    'purge_at', 'deleted_by_id', 'user_id', 'name', 'email', 'role', 'role_id', 'active', 'type',
  ],
};

/** The segments of the legacy read endpoints. */
export type LegacyReadSegment = 'tasks' | 'projects' | 'docs' | 'members';

const camelOf = (snake: string): string => snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const READ_SOURCES: ReadonlyMap<LegacyReadSegment, ReadonlyArray<readonly [string, string]>> = new Map(
  (Object.keys(LEGACY_READ_FIELDS) as LegacyReadSegment[]).map((seg) => [seg, LEGACY_READ_FIELDS[seg].map((name) => [name, camelOf(name)] as const)]),
);

/** The legacy form of a v3 record of a read segment: exactly its pinned fields, in order. */
export function legacyRecord(segment: LegacyReadSegment, v3: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, source] of READ_SOURCES.get(segment)!) out[name] = Object.hasOwn(v3, source) ? v3[source] ?? null : null;
  return out;
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
