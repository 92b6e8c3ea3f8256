import { ProblemError } from '../errors/problem';
import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import { nextOrder, paletteColor } from './rules';
import { patchRecord } from '../services/records';
import { releaseFormTargets } from './form.resource';

/**
 * Statuses: a project's board columns (fields not shown: docs/not-shown.md).
 * Every project gets a default one; tasks created without statusId land in the first active one.
 */
export const statusResource = defineResource({
  name: 'status',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  path: 'statuses',
  retiredPaths: ['task-groups'],
  fields: {
    name: f.string({ trim: true, min: 1, max: 100, required: true }),
    projectId: f.ref('project', { mode: 'createOnly' }),
    color: f.hexColor({ nullable: true }),
    order: f.number(),
    archived: f.boolean(),
    assignees: f.refs('assignees', { target: 'member' }),
    hiddenFor: f.refs('hiddenFor', { target: 'role' }),
  },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    archived: { ops: ['eq'] },
    order: { ops: ['eq', ...RANGE] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  listParams: { projectId: {} },
  projectField: 'projectId',
  defaultSort: 'order',
  defaultSortWithoutProject: '-updatedAt',
  expand: {
    tasks: { kind: 'children', target: 'task', field: 'statusId' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      if (typeof input.projectId !== 'string') throw new ProblemError('project_not_specified', 'A status needs a projectId');
      input.color ??= paletteColor(ctx);
      input.archived ??= false;
      input.order ??= await nextOrder(ctx, 'status', { project_id: input.projectId }, 100);
    },
    async beforeDestroy(ctx, rec) {
      // Tasks, lists and recurring rules in a deleted column keep living without a status.
      for (const name of ['task', 'list', 'recurringRule']) {
        const res = ctx.registry.get(name);
        for (const row of await ctx.repo.findBy(res, ctx.teamId, 'status_id', [rec.id])) await patchRecord(ctx, res, row, { statusId: null });
      }
      // Forms whose task automation lands in this column lose that automation.
      await releaseFormTargets(ctx, 'targetStatusId', [rec.id]);
    },
  },
});

