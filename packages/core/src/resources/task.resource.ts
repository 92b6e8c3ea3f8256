import { ProblemError } from '../errors/problem';
import { EVENT_TEXT_MAX, followTaskMove, postLifecycleMessage } from './message.resource';
import { DOCUMENT_TASK_LINK } from './document.resource';
import { defineResource, RANGE, type Rec } from './define-resource';
import { customFieldsSchema, f } from './fields';
import { fieldError, rejectPromotional, sameProject } from './rules';
import { announce, destroyDependants, patchRecord } from '../services/records';
import { allowsCompletingBlockedTasks } from '../sql/queries/workspaces';
import type { WriteContext } from './hooks';
import { settleStrandedHandoffs } from './task-handoff.resource';
import { customFieldsExpand, customValuesAfterMove, dropCustomValueIndex, indexCustomValues, lockCustomFieldsFirst, prepareCustomValuesOnCreate, prepareCustomValuesOnUpdate } from './custom-values';

export const MOVE_SUBTREE_MAX = 200;

/** Tasks and subtasks (spec "Task"). Project-scoped; deletes are permanent. */
export const taskResource = defineResource({
  name: 'task',
  // The one resource a client (guest) writes.
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write'] },
  path: 'tasks',
  fields: {
    name: f.string({ trim: true, min: 1, max: 1024, required: true }),
    // nextNiceId bumps the project's counter in every create and move: that locks the project row.
    projectId: f.ref('project', { lockedByWrite: true }),
    description: f.string({ max: 1_000_000, nullable: true }),
    archived: f.boolean(),
    archivedAt: f.readOnly('timestamp', { nullable: true }),
    archivedById: f.readOnly('text', { nullable: true }),
    completed: f.boolean(),
    completedAt: f.readOnly('timestamp', { nullable: true }),
    completedById: f.readOnly('text', { nullable: true }),
    listId: f.ref('list', { nullable: true, retiredNames: ['milestoneId'] }),
    statusId: f.ref('status', { nullable: true, retiredNames: ['taskGroupId'] }),
    parentTaskId: f.ref('task', { nullable: true }),
    dependencyId: f.ref('task', { nullable: true }),
    recurringRuleId: f.ref('recurringRule', { nullable: true }),
    startAt: f.timestamp({ nullable: true }),
    dueAt: f.timestamp({ nullable: true }),
    remindAt: f.timestamp({ nullable: true }),
    storyPoints: f.number({ min: 0, nullable: true }),
    estimate: f.number({ min: 0, nullable: true }),
    order: f.number(),
    orderList: f.number({ nullable: true }),
    banner: f.url({ nullable: true }),
    embedUrl: f.url({ nullable: true }),
    customFields: f.json(customFieldsSchema, { nullable: true }),
    assignees: f.refs('assignees', { target: 'member' }),
    labels: f.refs('labels', { target: 'label' }),
    subscribers: f.refs('subscribers', { target: 'member' }),
    // Task relations of spec "Events" (membership task.connectedTasks.*, task.hiddenFor.*): replace-the-set in bodies, like assignees (docs/not-shown.md "Task operations").
    connectedTasks: f.refs('connectedTasks', { target: 'task' }),
    hiddenFor: f.refs('hiddenFor', { target: 'role' }),
    niceId: f.readOnly('text'),
    createdById: f.readOnly('text', { nullable: true }),
  },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    niceId: { ops: ['eq', 'in'] },
    recurringRuleId: { ops: ['eq', 'in'] },
    createdById: { ops: ['eq', 'in'] },
    labelId: { ops: ['eq', 'in'], relation: 'labels' },
    assigneeId: { ops: ['eq', 'in'], relation: 'assignees' },
    subscriberId: { ops: ['eq', 'in'], relation: 'subscribers' },
    createdByActorId: { ops: ['eq', 'in'] },
    updatedByActorId: { ops: ['eq', 'in'] },
    archived: { ops: ['eq'] },
    completed: { ops: ['eq'] },
    startAt: { ops: RANGE },
    dueAt: { ops: RANGE },
    completedAt: { ops: RANGE },
    archivedAt: { ops: RANGE },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  sortable: ['order', 'orderList', 'name', 'niceId'],
  listParams: { projectId: {}, scope: { values: ['project', 'personal', 'both'] } },
  projectField: 'projectId',
  defaultSort: 'order',
  defaultSortWithoutProject: '-updatedAt',
  expand: {
    subtasks: { kind: 'children', target: 'task', field: 'parentTaskId' },
    createdBy: { kind: 'one', target: 'member', field: 'createdById' },
    customFields: customFieldsExpand,
  },
  relations: {
    connectedTasks: {
      target: 'task',
      // A task is not connected to itself.
      validate: async (_ctx, parent, ids) => {
        if (ids.includes(parent.id)) throw fieldError('connectedTasks', 'self_connection', 'a task cannot be connected to itself');
      },
    },
    hiddenFor: { target: 'role' },
  },
  hooks: {
    forEvent(shown) {
      // A long description could pass the 1 MiB webhook payload cap (a failed delivery): events carry its start, as with message text.
      const text = shown.description;
      if (typeof text !== 'string' || text.length <= EVENT_TEXT_MAX) return shown;
      return { ...shown, description: text.slice(0, EVENT_TEXT_MAX), descriptionTruncated: true };
    },
    async beforeCreate(ctx, input) {
      rejectPromotional('name', input.name);
      let parent: Rec | undefined;
      if (typeof input.parentTaskId === 'string') {
        // Locked: a concurrent move of the parent's tree waits for us, or we see where it went.
        parent = await ctx.repo.get(ctx.registry.get('task'), ctx.teamId, input.parentTaskId, { lock: true });
        if (!parent) throw new ProblemError('resource_not_found', `parentTaskId: no task '${input.parentTaskId}' in this workspace`, { field: 'parentTaskId', id: input.parentTaskId });
        input.projectId ??= parent.projectId as string;
      }
      if (typeof input.projectId !== 'string') throw new ProblemError('project_not_specified', 'A task needs a projectId (or a parentTaskId)');
      const project = input.projectId;
      if (parent && parent.projectId !== project) throw fieldError('parentTaskId', 'wrong_project', 'a subtask lives in its parent\'s project');
      if (input.statusId === undefined) {
        const first = await firstActive(ctx, 'status', project);
        if (!first) throw new ProblemError('task_no_default_status', 'The project has no active status to put the task in');
        ctx.remember('status', first);
        input.statusId = first.id;
      }
      // The status (and list) check, the counter bump and MAX(order) go to the database together (one round
      // trip). The bump locks the project row until commit, so creates in one project are serialised from there
      // on: the MAX runs after it, when the lock is ours, and sees every earlier create. A failed check rolls
      // the bump back with the rest.
      const orderless = input.order === undefined;
      const [, niceId, m] = await ctx.repo.together(() => [
        sameProject(ctx, project, input),
        nextNiceId(ctx, project),
        orderless ? ctx.repo.max(ctx.registry.get('task'), ctx.teamId, 'order', { project_id: project }) : Promise.resolve(null),
      ] as const);
      input.niceId = niceId;
      if (input.order === undefined) input.order = (m ?? 0) + 1;
      await prepareCustomValuesOnCreate(ctx, 'task', project, input);
      if (input.completed === true) {
        await checkDependency(ctx, input.dependencyId);
        input.completedAt = ctx.now;
        input.completedById = ctx.principal.memberId;
      } else input.completed = false;
      if (input.archived === true) {
        input.archivedAt = ctx.now;
        input.archivedById = ctx.principal.memberId;
      } else input.archived = false;
      await checkSiblingOrder(ctx, (input.parentTaskId) ?? null, input.order);
      // A task the service creates (a recurring rule's) has no creating member.
      input.createdById = ctx.principal.memberId || null;
    },
    async beforeUpdate(ctx, current, patch) {
      if ('name' in patch) rejectPromotional('name', patch.name);
      let project = current.projectId;
      if ('projectId' in patch) {
        if (patch.projectId === null) throw fieldError('projectId', 'invalid_type', 'projectId cannot be null');
        if (patch.projectId === current.projectId) delete patch.projectId;
        else {
          if (current.parentTaskId) {
            throw new ProblemError('move_subtask_must_move_with_parent', 'A subtask moves with its parent; move the top-level task instead');
          }
          project = patch.projectId!;
          await prepareMove(ctx, current, patch, project);
        }
      }
      if ('dependencyId' in patch && patch.dependencyId === current.id) throw fieldError('dependencyId', 'self_dependency', 'a task cannot depend on itself');
      if ('parentTaskId' in patch && patch.parentTaskId !== current.parentTaskId) await checkNewParent(ctx, current, patch.parentTaskId ?? null, project);
      if (!('projectId' in patch)) await sameProject(ctx, project, patch);
      await prepareCustomValuesOnUpdate(ctx, 'task', project, current, patch);
      if (patch.completed === true && !current.completed) {
        const dep = 'dependencyId' in patch ? (patch.dependencyId) : (current.dependencyId);
        await checkDependency(ctx, dep);
        patch.completedAt = ctx.now;
        patch.completedById = ctx.principal.memberId;
      } else if (patch.completed === false && current.completed) {
        patch.completedAt = null;
        patch.completedById = null;
      }
      if (patch.archived === true && !current.archived) {
        patch.archivedAt = ctx.now;
        patch.archivedById = ctx.principal.memberId;
      } else if (patch.archived === false && current.archived) {
        patch.archivedAt = null;
        patch.archivedById = null;
      }
      const parent = ('parentTaskId' in patch ? patch.parentTaskId : current.parentTaskId) as string | null;
      if (('order' in patch && patch.order !== current.order) || ('parentTaskId' in patch && parent !== current.parentTaskId)) {
        await checkSiblingOrder(ctx, parent, (patch.order ?? current.order) as number, current.id);
      }
    },
    async lockFirst(ctx, body) {
      await lockCustomFieldsFirst(ctx, 'task', body);
    },
    async afterCreate(ctx, rec) {
      await indexCustomValues(ctx, 'task', undefined, rec);
      if (typeof rec.parentTaskId === 'string') await postLifecycleMessage(ctx, { taskId: rec.parentTaskId }, 'tieTask', `<?${rec.id}> was added as a subtask`);
    },
    async afterUpdate(ctx, before, after) {
      await indexCustomValues(ctx, 'task', before, after);
      if (after.projectId !== before.projectId) {
        await moveSubtree(ctx, before, after);
        const moved = (await collectSubtree(ctx, after.id, MOVE_SUBTREE_MAX)).map((t) => t.id);
        await followTaskMove(ctx, moved, after.projectId);
        // Recipients who cannot open the project the tasks moved to: their pending handoffs of them are declined.
        await settleStrandedHandoffs(ctx, 'taskId', moved, after.projectId);
      }
      await announceParentChange(ctx, after.id, before.parentTaskId, after.parentTaskId);
    },
    async beforeDestroy(ctx, rec) {
      const tasks = ctx.registry.get('task');
      // Subtasks go with their parent; each removal is announced.
      const subtree = await collectSubtree(ctx, rec.id, Number.POSITIVE_INFINITY);
      const descendants = subtree.filter((t) => t.id !== rec.id);
      const kinds = Object.keys(tasks.relations ?? {}).map((r) => `task.${r}`);
      for (const d of descendants.reverse()) {
        await announce(ctx, tasks, d, 'removed');
        await ctx.repo.dropLinks({ kinds, parentIds: [d.id] });
        await ctx.repo.dropLinks({ kinds: ['task.connectedTasks'], relatedIds: [d.id] });
      }
      const gone = new Set(subtree.map((t) => t.id));
      await dropCustomValueIndex(ctx, 'task', [...gone]);
      // Documents attached to these tasks stay; the attachments go.
      await ctx.repo.dropLinks({ kinds: [DOCUMENT_TASK_LINK], relatedIds: [...gone] });
      await forgetThreadTasks(ctx, [...gone]);
      const dependants = await ctx.repo.findBy(tasks, ctx.teamId, 'dependency_id', [...gone]);
      for (const d of dependants) if (!gone.has(d.id)) await patchRecord(ctx, tasks, d, { dependencyId: null });
      // What hangs off the subtasks (checklists, …) goes with them.
      await destroyDependants(ctx, tasks, descendants.map((d) => d.id));
      await ctx.repo.destroy(tasks, ctx.teamId, descendants.map((d) => d.id));
    },
  },
});

/**
 * The lifecycle messages of a subtask's parent changing (spec "Message":
 * tieTask, untieTask, moveSubtask): tied under a task, on that task's
 * thread; untied, on the former parent's; moved from one parent to
 * another, on the subtask's own.
 */
async function announceParentChange(ctx: WriteContext, id: string, from: string | null, to: string | null): Promise<void> {
  if (from === to) return;
  if (from === null && to !== null) await postLifecycleMessage(ctx, { taskId: to }, 'tieTask', `<?${id}> was added as a subtask`);
  else if (from !== null && to === null) await postLifecycleMessage(ctx, { taskId: from }, 'untieTask', `<?${id}> is no longer a subtask`);
  else await postLifecycleMessage(ctx, { taskId: id }, 'moveSubtask', `Moved from <?${from}> to <?${to}>`);
}

/** Annotation threads held by tasks that go for good: files and annotations forget them (the next first comment makes a new one). */
export async function forgetThreadTasks(ctx: WriteContext, taskIds: readonly string[]): Promise<void> {
  if (taskIds.length === 0) return;
  const files = ctx.registry.get('file');
  for (const f of await ctx.repo.findBy(files, ctx.teamId, files.columnOf.annotationTaskId!, taskIds, { includeTrashed: true })) {
    await patchRecord(ctx, files, f, { annotationTaskId: null });
  }
  const annotations = ctx.registry.get('annotation');
  for (const a of await ctx.repo.findBy(annotations, ctx.teamId, annotations.columnOf.taskId!, taskIds)) await patchRecord(ctx, annotations, a, { taskId: null });
}

async function firstActive(ctx: WriteContext, resName: 'status' | 'list', projectId: string): Promise<Rec | undefined> {
  const [first] = await ctx.repo.findWhere(ctx.registry.get(resName), ctx.teamId, { projectId, archived: false }, { orderBy: ['order'], limit: 1 });
  return first;
}

async function checkDependency(ctx: WriteContext, dependencyId: string | null | undefined) {
  if (!dependencyId) return;
  const dep = await ctx.repo.get(ctx.registry.get('task'), ctx.teamId, dependencyId);
  if (!dep || dep.completed) return;
  if (await allowsCompletingBlockedTasks(ctx.repo, ctx.teamId)) return;
  throw new ProblemError('task_dependency_incomplete', `The dependency ${dependencyId} is not complete`, { dependencyId });
}

async function checkSiblingOrder(ctx: WriteContext, parentId: string | null, order: number, selfId?: string) {
  if (!parentId) return;
  const taken = await ctx.repo.findWhere(ctx.registry.get('task'), ctx.teamId, { parentTaskId: parentId, order }, { limit: 1, ...(selfId ? { exceptId: selfId } : {}) });
  if (taken.length) throw new ProblemError('conflict', `A sibling subtask already holds order ${order}`, { field: 'order' });
}

async function checkNewParent(ctx: WriteContext, current: Rec, parentId: string | null, project: string) {
  if (parentId === null) return;
  if (parentId === current.id) throw fieldError('parentTaskId', 'self_parent', 'a task cannot be its own parent');
  const parent = await ctx.mustGet('task', parentId, 'parentTaskId');
  if (parent.projectId !== project) throw fieldError('parentTaskId', 'wrong_project', "a subtask lives in its parent's project");
  // No cycles: the new parent may not sit inside this task's subtree.
  let cursor: Rec | undefined = parent;
  for (let hops = 0; cursor && hops < 10_000; hops++) {
    if (cursor.id === current.id) throw fieldError('parentTaskId', 'cycle', 'the parent is a subtask of this task');
    cursor = cursor.parentTaskId ? await ctx.repo.get(ctx.registry.get('task'), ctx.teamId, cursor.parentTaskId as string) : undefined;
  }
}

/** Next niceId of a project: one atomic counter bump, so concurrent creates never share one. */
async function nextNiceId(ctx: WriteContext, projectId: string): Promise<string> {
  const n = await ctx.repo.increment(ctx.registry.get('project'), ctx.teamId, projectId, 'taskCounter');
  if (n === undefined) throw new ProblemError('resource_not_found', `No project '${projectId}'`, { field: 'projectId', id: projectId });
  return String(n);
}

/** The task and all its descendants (breadth first), failing past `max` nodes. */
async function collectSubtree(ctx: WriteContext, rootId: string, max: number): Promise<Rec[]> {
  const tasks = ctx.registry.get('task');
  const root = await ctx.repo.get(tasks, ctx.teamId, rootId);
  const out: Rec[] = root ? [root] : [];
  let frontier = [rootId];
  while (frontier.length) {
    const children = await ctx.repo.findBy(tasks, ctx.teamId, 'parent_task_id', frontier);
    out.push(...children);
    if (out.length > max) {
      throw new ProblemError('task_subtask_chain_too_deep', `The task and its subtasks exceed ${max} nodes; nothing was moved`, {
        max, received: out.length,
      });
    }
    frontier = children.map((c) => c.id);
  }
  return out;
}

/** Validate a cross-project move and pick the target's list and status column. */
async function prepareMove(ctx: WriteContext, current: Rec, patch: Record<string, unknown>, target: string) {
  await ctx.mustGet('project', target, 'projectId');
  await collectSubtree(ctx, current.id, MOVE_SUBTREE_MAX);
  if (typeof patch.listId === 'string') {
    const l = await ctx.mustGet('list', patch.listId, 'listId');
    if (l.projectId !== target) throw new ProblemError('move_target_milestone_mismatch', 'listId (milestoneId) belongs to another project than the target', { field: 'listId' });
  } else if (!('listId' in patch) && current.listId) {
    const l = await firstActive(ctx, 'list', target);
    if (!l) throw new ProblemError('move_target_no_default_milestone', 'The target project has no non-archived list to move the task into');
    patch.listId = l.id;
  }
  if (typeof patch.statusId === 'string') {
    const s = await ctx.mustGet('status', patch.statusId, 'statusId');
    if (s.projectId !== target) throw new ProblemError('move_target_taskgroup_mismatch', 'statusId (taskGroupId) belongs to another project than the target', { field: 'statusId' });
  } else if (!('statusId' in patch) && current.statusId) {
    const s = await firstActive(ctx, 'status', target);
    if (!s) throw new ProblemError('move_target_no_default_taskgroup', 'The target project has no status column to move the task into');
    patch.statusId = s.id;
  }
  patch.niceId = await nextNiceId(ctx, target);
}

/** After the root moved: its subtasks follow, taking the root's new list/status defaults and fresh niceIds. */
async function moveSubtree(ctx: WriteContext, before: Rec, after: Rec) {
  const tasks = ctx.registry.get('task');
  const subtree = await collectSubtree(ctx, after.id, MOVE_SUBTREE_MAX);
  const values = await customValuesAfterMove(ctx, subtree.filter((t) => t.id !== after.id), after.projectId as string);
  for (const t of subtree) {
    if (t.id === after.id) continue;
    await patchRecord(ctx, tasks, t, {
      projectId: after.projectId,
      niceId: await nextNiceId(ctx, after.projectId as string),
      statusId: t.statusId ? after.statusId ?? null : null,
      listId: t.listId ? after.listId ?? null : null,
      ...values.get(t.id),
    });
  }
  void before;
}

