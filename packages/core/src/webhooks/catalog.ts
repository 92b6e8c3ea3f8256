import type { Registry } from '../resources/registry';

/**
 * The webhook event catalog (spec "Events" → "Event names"), generated once
 * per registry: lifecycle × every listed resource, one added/removed pair
 * per relation, and the operation events.
 */

/** Spec "Lifecycle resources" (31): each emits all five actions. */
export const LIFECYCLE_RESOURCES = [
  'annotation', 'chat', 'checkIn', 'checkInRequest', 'checklist', 'checklistItem', 'document', 'favorite', 'favoriteFolder', 'file',
  'form', 'goal', 'goalGroup', 'label', 'list', 'member', 'message', 'portfolio', 'project', 'projectDashboard', 'projectFolder',
  'recurringRule', 'reminder', 'reportChart', 'role', 'status', 'task', 'taskHandoff', 'presenceStatus', 'timeEntry', 'webhook',
] as const;

export const LIFECYCLE_ACTIONS = ['created', 'updated', 'removed', 'restored', 'force_deleted'] as const;

/** Spec "Membership relations" (17 pairs, 34 events). */
export const SPEC_RELATIONS: Record<string, readonly string[]> = {
  checkIn: ['assignees', 'subscribers'],
  checkInRequest: ['assignees'],
  file: ['labels', 'subscribers'],
  list: ['assignees', 'goals', 'hiddenFor'],
  portfolio: ['members'],
  reportChart: ['projects'],
  status: ['assignees', 'hiddenFor'],
  task: ['assignees', 'connectedTasks', 'hiddenFor', 'labels', 'subscribers'],
};

/**
 * The two pairs the spec's stated count (38) holds beyond its list ("not
 * shown"; docs/not-shown.md "Webhooks"): the project roster, which the engine
 * emits, and a message's attached files (the spec's Message.files is a
 * replace-the-set id list, the same shape as every listed relation).
 */
export const NOT_SHOWN_RELATIONS: Record<string, readonly string[]> = {
  project: ['members'],
  message: ['files'],
};

/** Spec "Operation events" (13 names; the stated count is 11). */
export const OPERATION_EVENTS = [
  'document.append', 'document.editText', 'file.createFromContent', 'file.createUploadUrl', 'file.uploadFromUrl',
  'project.addMember', 'project.removeMember', 'project.transfer', 'task.attachDocument', 'task.createTree',
  'task.detachDocument', 'webhook.rotateSecret', 'webhook.test',
] as const;

export interface EventCatalog {
  lifecycle: readonly string[];
  membership: readonly string[];
  operation: readonly string[];
  /** Every name, sorted. */
  all: readonly string[];
  has(name: string): boolean;
}

const cache = new WeakMap<Registry, EventCatalog>();

/**
 * The catalog for a registry: the spec's lists, plus anything the declared
 * resources can emit beyond them (a resource with writes, a relation with a
 * body field or sub-route), so every emitted event is a catalog name.
 */
export function eventCatalog(registry: Registry): EventCatalog {
  const hit = cache.get(registry);
  if (hit) return hit;
  const lifecycleRes = new Set<string>(LIFECYCLE_RESOURCES);
  const pairs = new Set<string>();
  for (const src of [SPEC_RELATIONS, NOT_SHOWN_RELATIONS]) for (const [r, rels] of Object.entries(src)) for (const rel of rels) pairs.add(`${r}.${rel}`);
  for (const res of registry.all()) {
    if (!res.events) continue;
    const ops = res.operations;
    if (ops.create || ops.update || ops.delete) lifecycleRes.add(res.name);
    for (const rel of Object.keys(res.relations ?? {})) pairs.add(`${res.name}.${rel}`);
  }
  const lifecycle = [...lifecycleRes].flatMap((r) => LIFECYCLE_ACTIONS.map((a) => `${r}.${a}`));
  const membership = [...pairs].flatMap((p) => [`${p}.added`, `${p}.removed`]);
  const operation = [...OPERATION_EVENTS];
  const all = [...new Set([...lifecycle, ...membership, ...operation])].sort();
  const set = new Set(all);
  const catalog: EventCatalog = { lifecycle, membership, operation, all, has: (n) => set.has(n) };
  cache.set(registry, catalog);
  return catalog;
}
