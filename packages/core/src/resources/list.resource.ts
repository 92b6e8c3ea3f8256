import { z } from 'zod';
import { ProblemError } from '../errors/problem';
import { defineResource, RANGE, type Rec } from './define-resource';
import { customFieldsSchema, f } from './fields';
import { fieldError, nextOrder, normaliseColor, paletteColor, rejectPromotional } from './rules';
import { patchRecord } from '../services/records';
import type { WriteContext } from './hooks';
import { releaseFormTargets } from './form.resource';
import { customFieldsExpand, dropCustomValueIndex, indexCustomValues, lockCustomFieldsFirst, prepareCustomValuesOnCreate, prepareCustomValuesOnUpdate } from './custom-values';

const TWO_DAYS = 2 * 24 * 60 * 60 * 1000;

/** Lists, and milestones when isMilestone is true (spec "List"). Hard-deleted. */
export const listResource = defineResource({
  name: 'list',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  path: 'lists',
  retiredPaths: ['milestones'],
  fields: {
    name: f.string({ trim: true, min: 1, max: 255, required: true, nullable: false }),
    projectId: f.ref('project', { mode: 'createOnly' }),
    description: f.string({ max: 100_000, nullable: true }),
    start: f.timestamp({ nullable: true }),
    end: f.timestamp({ nullable: true }),
    order: f.number(),
    color: f.text(z.string().regex(/^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$/, 'must be #RGB or #RRGGBB')),
    archived: f.boolean(),
    isMilestone: f.boolean(),
    dependencyId: f.ref('list', { nullable: true }),
    statusId: f.ref('status', { mode: 'createOnly', nullable: true }),
    recurringRuleId: f.ref('recurringRule', { nullable: true }),
    assignees: f.refs('assignees', { target: 'member' }),
    hiddenFor: f.refs('hiddenFor', { target: 'role' }),
    goals: f.refs('goals', { target: 'goal' }),
    customFields: f.json(customFieldsSchema, { nullable: true }),
  },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    archived: { ops: ['eq'] },
    isMilestone: { ops: ['eq'] },
    ruleId: { ops: ['eq', 'in'], field: 'recurringRuleId' },
    goalId: { ops: ['eq', 'in'], relation: 'goals' },
    start: { ops: RANGE },
    end: { ops: RANGE },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  sortable: ['order', 'name', 'start', 'end'],
  listParams: { projectId: {} },
  projectField: 'projectId',
  defaultSort: 'order',
  defaultSortWithoutProject: '-updatedAt',
  expand: {
    tasks: { kind: 'children', target: 'task', field: 'listId' },
    customFields: customFieldsExpand,
  },
  relations: {
    hiddenFor: { target: 'role', notFoundCode: 'milestone_hiddenfor_roles_not_in_team' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      rejectPromotional('name', input.name);
      if (typeof input.projectId !== 'string') throw new ProblemError('project_not_specified', 'A list needs a projectId');
      const project = input.projectId;
      input.color = typeof input.color === 'string' ? normaliseColor(input.color) : paletteColor(ctx);
      input.archived ??= false;
      input.isMilestone ??= false;
      input.order ??= await nextOrder(ctx, 'list', { project_id: project }, 100);
      await checkSameProject(ctx, project, input);
      milestoneDates(input, input);
      await prepareCustomValuesOnCreate(ctx, 'list', project, input);
    },
    async afterCreate(ctx, rec) {
      await indexCustomValues(ctx, 'list', undefined, rec);
    },
    async lockFirst(ctx, body) {
      await lockCustomFieldsFirst(ctx, 'list', body);
    },
    async beforeUpdate(ctx, current, patch) {
      if ('name' in patch) rejectPromotional('name', patch.name);
      if (typeof patch.color === 'string') patch.color = normaliseColor(patch.color);
      if (patch.dependencyId === current.id) throw fieldError('dependencyId', 'self_dependency', 'a list cannot depend on itself');
      await checkSameProject(ctx, current.projectId, patch);
      const merged = { ...current, ...patch };
      milestoneDates(merged, patch);
      await prepareCustomValuesOnUpdate(ctx, 'list', current.projectId, current, patch);
    },
    async afterUpdate(ctx, before, after) {
      await indexCustomValues(ctx, 'list', before, after);
    },
    async beforeDestroy(ctx, rec) {
      await dropCustomValueIndex(ctx, 'list', [rec.id]);
      const lists = ctx.registry.get('list');
      for (const dep of await ctx.repo.findBy(lists, ctx.teamId, 'dependency_id', [rec.id])) await patchRecord(ctx, lists, dep, { dependencyId: null });
      const tasks = ctx.registry.get('task');
      for (const t of await ctx.repo.findBy(tasks, ctx.teamId, 'list_id', [rec.id])) await patchRecord(ctx, tasks, t, { listId: null });
      // Recurring rules that file their tasks into this list keep running without it.
      const rules = ctx.registry.get('recurringRule');
      for (const r of await ctx.repo.findBy(rules, ctx.teamId, 'list_id', [rec.id])) await patchRecord(ctx, rules, r, { listId: null });
      // Forms whose task automation files tasks into this list lose that automation.
      await releaseFormTargets(ctx, 'targetListId', [rec.id]);
    },
  },
});

async function checkSameProject(ctx: WriteContext, projectId: string, input: Record<string, unknown>) {
  if (typeof input.dependencyId === 'string') {
    const dep = await ctx.mustGet('list', input.dependencyId, 'dependencyId');
    if (dep.projectId !== projectId) {
      throw new ProblemError('milestone_dependency_wrong_project', 'dependencyId must name a list of the same project', { field: 'dependencyId' });
    }
  }
  if (typeof input.statusId === 'string') {
    const st: Rec = await ctx.mustGet('status', input.statusId, 'statusId');
    if (st.projectId !== projectId) throw fieldError('statusId', 'wrong_project', 'the status belongs to another project');
  }
}

/** start/end: required and ≥ 2 days apart on milestones, forced to null otherwise. */
function milestoneDates(merged: Record<string, unknown>, out: Record<string, unknown>) {
  if (merged.isMilestone) {
    const start = merged.start as number | null | undefined;
    const end = merged.end as number | null | undefined;
    const missing = [start == null ? 'start' : null, end == null ? 'end' : null].filter((x): x is string => !!x);
    if (missing.length) {
      throw new ProblemError('validation_failed', 'A milestone needs both start and end', {
        errors: missing.map((m) => ({ field: m, code: 'required', message: `${m} is required when isMilestone is true` })),
      });
    }
    if ((end as number) - (start as number) < TWO_DAYS) throw fieldError('end', 'too_close', 'end must be at least 2 days after start');
  } else {
    out.start = null;
    out.end = null;
  }
}
