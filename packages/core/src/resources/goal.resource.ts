import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import { fieldError, nextOrder, paletteColor } from './rules';
import { patchRecord } from '../services/records';

/*
 * Goals and goal groups (spec "Other resources": fields not shown; "Events":
 * lifecycle resources goal and goalGroup; "List": a list's `goals` set).
 * Every decision taken here: docs/not-shown.md "Goals and goal groups".
 */

export const GOAL_NAME_MAX = 255;
export const GOAL_DESCRIPTION_MAX = 10_000;
export const GOAL_UNIT_MAX = 20;
export const GOAL_STATUSES = ['onTrack', 'atRisk', 'offTrack', 'achieved'] as const;

/**
 * Goal groups: workspace-level headings goals are filed under. Hard-deleted;
 * deleting a group keeps its goals, ungrouped (`groupId: null`, each with
 * `goal.updated`). `order` appends when omitted.
 */
export const goalGroupResource = defineResource({
  name: 'goalGroup',
  path: 'goal-groups',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    name: f.string({ trim: true, min: 1, max: GOAL_NAME_MAX, required: true }),
    description: f.string({ max: GOAL_DESCRIPTION_MAX, nullable: true }),
    color: f.hexColor(),
    order: f.number(),
  },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  sortable: ['order'],
  defaultSort: 'order',
  expand: { goals: { kind: 'children', target: 'goal', field: 'groupId' } },
  hooks: {
    async beforeCreate(ctx, input) {
      input.description ??= null;
      input.color = typeof input.color === 'string' ? input.color.toLowerCase() : paletteColor(ctx);
      input.order ??= await nextOrder(ctx, 'goalGroup', {}, 1);
    },
    beforeUpdate(_ctx, _current, patch) {
      if (typeof patch.color === 'string') patch.color = patch.color.toLowerCase();
    },
    async beforeDestroy(ctx, rec) {
      const goals = ctx.registry.get('goal');
      for (const g of await ctx.repo.findWhere(goals, ctx.teamId, { groupId: rec.id })) await patchRecord(ctx, goals, g, { groupId: null });
    },
  },
});

/**
 * Goals: workspace-level objectives with a measurable target, optionally in a
 * group, owned by a member, linked to lists through the lists' `goals` set.
 * Hard-deleted; a deleted goal leaves every list's `goals`.
 */
export const goalResource = defineResource({
  name: 'goal',
  path: 'goals',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    name: f.string({ trim: true, min: 1, max: GOAL_NAME_MAX, required: true }),
    description: f.string({ max: GOAL_DESCRIPTION_MAX, nullable: true }),
    groupId: f.ref('goalGroup', { nullable: true }),
    ownerId: f.ref('member', { nullable: true }),
    status: f.enum(GOAL_STATUSES),
    startValue: f.number(),
    currentValue: f.number(),
    targetValue: f.number(),
    unit: f.string({ trim: true, max: GOAL_UNIT_MAX, nullable: true }),
    startDate: f.date({ nullable: true }),
    dueDate: f.date({ nullable: true }),
  },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    groupId: { ops: ['eq', 'in', 'null', 'notNull'] },
    ownerId: { ops: ['eq', 'in', 'null', 'notNull'] },
    status: { ops: ['eq', 'in'] },
    startDate: { ops: ['null', 'notNull', ...RANGE] },
    dueDate: { ops: ['null', 'notNull', ...RANGE] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  defaultSort: 'createdAt',
  hooks: {
    beforeCreate(ctx, input) {
      input.description ??= null;
      input.groupId ??= null;
      if (input.ownerId === undefined) input.ownerId = ctx.principal.memberId;
      input.status ??= 'onTrack';
      input.startValue ??= 0;
      input.currentValue ??= input.startValue;
      input.targetValue ??= 100;
      input.unit ??= null;
      input.startDate ??= null;
      input.dueDate ??= null;
      checkGoal(input);
    },
    beforeUpdate(_ctx, current, patch) {
      checkGoal({ ...current, ...patch });
    },
  },
});

/** dueDate is on or after startDate; targetValue differs from startValue (progress is measured between them). */
function checkGoal(g: { startDate?: string | null; dueDate?: string | null; startValue?: number; targetValue?: number }) {
  if (typeof g.startDate === 'string' && typeof g.dueDate === 'string' && g.dueDate < g.startDate) {
    throw fieldError('dueDate', 'before_start', 'dueDate must be on or after startDate');
  }
  if (g.startValue !== undefined && g.startValue === g.targetValue) {
    throw fieldError('targetValue', 'equals_start', 'targetValue must differ from startValue');
  }
}
