import type { CustomRoute } from '../http/routes';
import type { WriteContext } from '../services/context';
import type { Engine, OpResult } from '../services/engine';
import { ProblemError, validationError, type FieldError } from '../errors/problem';
import { prepareBody } from '../services/body';
import { EXPAND_ROW_BUDGET, materialize } from '../services/serialize';
import { eventPayload } from '../services/records';
import { OversizedArray } from '../http/body';
import { MOVE_SUBTREE_MAX } from '../resources/task.resource';
import type { ReadPlan } from '../query/parse';

/*
 * The task-tree operation (spec "Events": task.createTree; spec "Limits": a
 * task subtree holds at most 200 nodes). POST /tasks/tree takes a task's
 * create body plus `subtasks`: an array of nodes of the same shape, nested
 * to any depth the body limits allow. The whole tree is validated before
 * anything is written, then created top-down, each node through the
 * standard create (its rules, defaults, relations and task.created event),
 * in one transaction: all or nothing. The answer (201) is the root task with
 * `subtasks` holding the created subtasks in the order sent, recursively;
 * task.createTree carries it under `task`. Path and body are "not shown":
 * docs/not-shown.md "Task operations".
 */

/** Most tasks one tree may hold, root included (the subtree limit of spec "Limits"). */
export const TREE_NODES_MAX = MOVE_SUBTREE_MAX;

/** Keys a subtask node may not carry: the tree decides them. */
const TREE_DECIDES = ['projectId', 'parentTaskId'] as const;

const NO_VIEW: ReadPlan = { expand: { children: new Map() }, fields: new Map() };

interface Node {
  body: Record<string, unknown>;
  children: Node[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof OversizedArray);
}

/** How many nodes the body holds (an oversized array counts its length; the body limits bound the walk). */
function countNodes(root: unknown): number {
  let n = 0;
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    n++;
    if (!isObject(node)) continue;
    const subs = node.subtasks;
    if (subs instanceof OversizedArray) n += subs.length;
    else if (Array.isArray(subs)) stack.push(...subs);
  }
  return n;
}

/**
 * Validate every node (with the standard create rules, prefixed with the
 * node's path: `subtasks.0.subtasks.1.name`) and build the tree; every
 * error of the whole tree is reported at once.
 */
function parseTree(raw: unknown, engineTasks: Parameters<typeof prepareBody>[0]): Node {
  const errors: FieldError[] = [];
  const walk = (value: unknown, path: string, isRoot: boolean): Node | undefined => {
    const at = (field: string) => (path ? `${path}.${field}` : field);
    if (!isObject(value)) {
      errors.push({ field: path, code: 'invalid_type', message: 'a task node must be a JSON object' });
      return undefined;
    }
    const { subtasks, ...body } = value;
    if (!isRoot) {
      for (const k of TREE_DECIDES) {
        if (k in body) errors.push({ field: at(k), code: 'not_allowed', message: `a subtask takes its ${k} from the tree` });
      }
    }
    try {
      prepareBody(engineTasks, body, 'create');
    } catch (err) {
      if (!(err instanceof ProblemError) || err.code !== 'validation_failed') throw err;
      for (const e of (err.extras.errors as FieldError[] | undefined) ?? []) errors.push({ ...e, field: at(e.field) });
    }
    const children: Node[] = [];
    if (subtasks !== undefined) {
      if (!Array.isArray(subtasks)) errors.push({ field: at('subtasks'), code: 'invalid_type', message: 'must be an array of task nodes' });
      else {
        subtasks.forEach((s, i) => {
          const child = walk(s, at(`subtasks.${i}`), false);
          if (child) children.push(child);
        });
      }
    }
    return { body, children };
  };
  const root = walk(raw === undefined || raw === null ? {} : raw, '', true);
  if (errors.length || !root) throw validationError(errors.length ? errors : [{ field: '', code: 'invalid_type', message: 'the body must be a JSON object' }]);
  return root;
}

/** POST /tasks/tree: create a task with its nested subtasks, atomically. */
async function createTree(ctx: WriteContext, engine: Engine, raw: unknown): Promise<OpResult> {
  const tasks = ctx.registry.get('task');
  // Measured before any node is looked at.
  const received = countNodes(raw === undefined || raw === null ? {} : raw);
  if (received > TREE_NODES_MAX) {
    throw new ProblemError('task_subtask_chain_too_deep', `A task tree holds at most ${TREE_NODES_MAX} tasks, root included; nothing was created`, {
      max: TREE_NODES_MAX, received,
    });
  }
  const root = parseTree(raw, tasks);
  // Top-down: a subtask is created under its parent; each create is the standard one (rules, defaults, task.created).
  const order: string[] = [];
  const childrenOf = new Map<string, string[]>();
  const create = async (node: Node, parentId: string | undefined): Promise<string> => {
    const body = parentId === undefined ? node.body : { ...node.body, parentTaskId: parentId };
    const out = await engine.create(ctx, tasks, body, NO_VIEW);
    if (out.kind !== 'record') throw new Error('pmapi: task create answered no record');
    const id = out.record.id as string;
    order.push(id);
    const kids: string[] = [];
    for (const child of node.children) kids.push(await create(child, id));
    childrenOf.set(id, kids);
    return id;
  };
  const rootId = await create(root, undefined);
  // Every node as it now stands (a later create may have touched an earlier one), in one read.
  const recs = await ctx.repo.getMany(tasks, ctx.teamId, order, undefined, { links: true });
  const shown = await materialize(ctx, tasks, recs, { expand: { children: new Map() }, fields: new Map(), budget: { used: 0, max: EXPAND_ROW_BUDGET } });
  const byId = new Map(shown.map((s) => [s.id as string, s]));
  const nest = (id: string): Record<string, unknown> => ({ ...byId.get(id)!, subtasks: (childrenOf.get(id) ?? []).map(nest) });
  const tree = nest(rootId);
  // The event stays under the 1 MiB webhook payload cap (docs/not-shown.md "Task operations"): the root as task events
  // carry it (description bounded), nested nodes without their description (each node's task.created carries it).
  const nestEvent = (id: string): Record<string, unknown> => {
    const { description: _d, ...node } = byId.get(id)!;
    return { ...node, subtasks: (childrenOf.get(id) ?? []).map(nestEvent) };
  };
  const eventTree = { ...eventPayload(tasks, byId.get(rootId)!), subtasks: (childrenOf.get(rootId) ?? []).map(nestEvent) };
  ctx.emit({ type: 'task.createTree', aggregateType: 'task', aggregateId: rootId, projectId: (tree.projectId as string | undefined) ?? null, payload: { task: eventTree } });
  return { status: 201, body: tree };
}

export const taskRoutes: CustomRoute[] = [
  {
    method: 'POST', path: 'tasks/tree', scope: { resource: 'tasks', action: 'write' }, write: true, body: { create: 'task', nested: 'subtasks' },
    run: (ctx, { body, engine }) => {
      if (!engine) throw new Error('pmapi: the task tree route needs the engine');
      return createTree(ctx, engine, body);
    },
  },
];
