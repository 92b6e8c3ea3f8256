import { z } from 'zod';
import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import { nextOrder } from './rules';

/** Longest checklist name, and longest item line (not shown in the spec: docs/not-shown.md "Checklists"). */
export const CHECKLIST_NAME_MAX = 255;
export const CHECKLIST_ITEM_NAME_MAX = 1024;

/**
 * Checklists on tasks (spec "Checklist and Checklist Item"): hard-deleted,
 * and deleting one deletes its items. `taskId` is set once; the checklist
 * lives in its task's project (`projectId`, read-only) and follows the task
 * when it moves. `order` is a fractional rank; omitted, it appends.
 */
export const checklistResource = defineResource({
  name: 'checklist',
  path: 'checklists',
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write'] },
  fields: {
    name: f.string({ trim: true, min: 1, max: CHECKLIST_NAME_MAX, required: true }),
    taskId: f.ref('task', { required: true, mode: 'createOnly', onDelete: 'cascade' }),
    order: f.number(),
    projectId: f.readOnly('text'),
  },
  projectField: 'projectId',
  projectFrom: 'taskId',
  listParams: { projectId: {} },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    createdAt: { ops: RANGE },
  },
  sortable: ['order'],
  defaultSort: 'order',
  defaultSortWithoutProject: '-updatedAt',
  expand: { checklistItems: { kind: 'children', target: 'checklistItem', field: 'checklistId' } },
  hooks: {
    async beforeCreate(ctx, input) {
      input.order ??= await nextOrder(ctx, 'checklist', { task_id: input.taskId }, 1);
    },
  },
});

/** A single completable line: no line breaks. */
const lineSchema = z.string().trim().min(1, 'must not be empty').max(CHECKLIST_ITEM_NAME_MAX, `must be at most ${CHECKLIST_ITEM_NAME_MAX} characters`)
  .refine((s) => !/[\r\n\u2028\u2029]/.test(s), { message: 'must be a single line', params: { code: 'multiline' } });

/** Checklist items: hard-deleted; `checklistId` set once; in their checklist's project; `completed` defaults to false. */
export const checklistItemResource = defineResource({
  name: 'checklistItem',
  path: 'checklist-items',
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write'] },
  fields: {
    name: f.text(lineSchema, { required: true }),
    checklistId: f.ref('checklist', { required: true, mode: 'createOnly', onDelete: 'cascade' }),
    order: f.number(),
    completed: f.boolean(),
    projectId: f.readOnly('text'),
  },
  projectField: 'projectId',
  projectFrom: 'checklistId',
  listParams: { projectId: {} },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    completed: { ops: ['eq'] },
    createdAt: { ops: RANGE },
  },
  sortable: ['order'],
  defaultSort: 'order',
  hooks: {
    async beforeCreate(ctx, input) {
      input.completed ??= false;
      input.order ??= await nextOrder(ctx, 'checklistItem', { checklist_id: input.checklistId }, 1);
    },
  },
});
