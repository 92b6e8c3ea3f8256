// What a hand-written handler needs to answer a task exactly as pmapi does (the same JSON, byte for byte):
// the columns in the order the API prints them, each turned into its JSON value in JavaScript, and the
// task's link rows (assignees, labels, subscribers, connected tasks, hidden-for) read with one statement
// for the whole page. The raw servers (server-raw.mjs, server-raw-pg.mjs) use it; the bench checks before
// measuring that they and pmapi answer the same bodies, so the ratios compare the same work.
import { createHmac } from 'node:crypto';

/** [field, column, kind]: kind t = instant, b = boolean, j = JSON text (SQLite) or value (Postgres). */
const FIELDS = [
  ['id', 'id'], ['createdAt', 'created_at', 't'], ['updatedAt', 'updated_at', 't'],
  ['createdByActorId', 'created_by_actor_id'], ['updatedByActorId', 'updated_by_actor_id'],
  ['createdByActorType', 'created_by_actor_type'], ['updatedByActorType', 'updated_by_actor_type'],
  ['name', 'name'], ['projectId', 'project_id'], ['description', 'description'],
  ['archived', 'archived', 'b'], ['archivedAt', 'archived_at', 't'], ['archivedById', 'archived_by_id'],
  ['completed', 'completed', 'b'], ['completedAt', 'completed_at', 't'], ['completedById', 'completed_by_id'],
  ['listId', 'list_id'], ['statusId', 'status_id'], ['parentTaskId', 'parent_task_id'], ['dependencyId', 'dependency_id'],
  ['recurringRuleId', 'recurring_rule_id'], ['startAt', 'start_at', 't'], ['dueAt', 'due_at', 't'], ['remindAt', 'remind_at', 't'],
  ['storyPoints', 'story_points'], ['estimate', 'estimate'], ['order', 'order'], ['orderList', 'order_list'],
  ['banner', 'banner'], ['embedUrl', 'embed_url'], ['customFields', 'custom_fields', 'j'], ['niceId', 'nice_id'], ['createdById', 'created_by_id'],
];

/** The link kinds a task prints, in the order it prints them. */
export const LINK_FIELDS = ['assignees', 'labels', 'subscribers', 'connectedTasks', 'hiddenFor'];
export const LINK_KINDS = LINK_FIELDS.map((f) => `task.${f}`);

const iso = (v) => (v === null ? null : (v instanceof Date ? v : new Date(v)).toISOString());

/** A task row (SQLite or Postgres) and its link rows ({kind, related_id} in link order) as the API's object. */
export function taskOf(row, links = []) {
  const t = {};
  for (const [field, column, kind] of FIELDS) {
    const v = row[column];
    t[field] = kind === 't' ? iso(v) : kind === 'b' ? (v === null ? null : !!v) : kind === 'j' && typeof v === 'string' ? JSON.parse(v) : v;
  }
  for (const f of LINK_FIELDS) t[f] = [];
  for (const l of links) t[l.kind.slice(5)].push(l.related_id);
  return t;
}

/** The page's tasks from its rows and the link rows of all of them (each with parent_id). */
export function tasksOf(rows, links) {
  const byTask = new Map(rows.map((r) => [r.id, []]));
  for (const l of links) byTask.get(l.parent_id)?.push(l);
  return rows.map((r) => taskOf(r, byTask.get(r.id)));
}

const key = Buffer.from('raw handler cursor key, 32 bytes');
/** A signed keyset cursor after `row` (the same work as pmapi's: JSON, base64url, HMAC-SHA-256). */
export function cursorAfter(row, teamId) {
  const body = Buffer.from(JSON.stringify({ v: 1, r: 'tasks', w: teamId, s: 'order', b: [row.order, row.id], t: Date.now() })).toString('base64url');
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}
