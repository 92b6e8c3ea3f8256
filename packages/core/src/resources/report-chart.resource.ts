import { z } from 'zod';
import { ProblemError } from '../errors/problem';
import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import type { WriteContext } from './hooks';
import { fieldError } from './rules';

/*
 * Report charts (spec "Other resources": fields not shown; "Events":
 * lifecycle resource reportChart, membership relation reportChart.projects).
 * Every decision taken here: docs/not-shown.md "Report charts".
 */

export const REPORT_CHART_NAME_MAX = 100;
export const REPORT_CHART_TYPES = ['burndown', 'burnup', 'velocity', 'cumulativeFlow', 'workload', 'taskStatus'] as const;
/** Most keys of a chart's `options`. */
export const REPORT_CHART_OPTIONS_MAX = 50;
/** The relation kind linking a chart to its projects. */
export const REPORT_CHART_PROJECTS = 'reportChart.projects';

/** Keys an object cannot hold verbatim (a record would drop or misread them): refused as `invalid_key`. */
export const REPORT_CHART_RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Display options, stored verbatim: flat keys with scalar values. */
const optionsSchema = z.unknown().superRefine((o, c) => {
  // Looked at before the record is rebuilt: `__proto__` would vanish from it silently.
  if (!o || typeof o !== 'object' || Array.isArray(o)) return;
  for (const k of Object.keys(o)) {
    if ((REPORT_CHART_RESERVED_KEYS as readonly string[]).includes(k)) {
      c.addIssue({ code: 'custom', path: [k], message: `'${k}' cannot be an option key`, params: { code: 'invalid_key' } });
    }
  }
}).pipe(z.record(
  z.string().min(1).max(64),
  z.union([z.string().max(1000), z.number().finite(), z.boolean(), z.null()]),
).refine((o) => Object.keys(o).length <= REPORT_CHART_OPTIONS_MAX, {
  message: `must hold at most ${REPORT_CHART_OPTIONS_MAX} keys`, params: { code: 'too_big' },
}));

/**
 * Report charts: a chart of one kind over one or more projects (`projects`,
 * a replace-the-set relation with sub-routes) and an optional date range.
 * Workspace-level (not inside one project), hard-deleted. Linking or
 * unlinking a project needs access to it (403 project_access_denied), and a
 * chart changes only by callers who open every project it spans.
 */
export const reportChartResource = defineResource({
  name: 'reportChart',
  path: 'report-charts',
  policy: { regular: ['read', 'write', 'delete'] },
  fields: {
    name: f.string({ trim: true, min: 1, max: REPORT_CHART_NAME_MAX, required: true }),
    type: f.enum(REPORT_CHART_TYPES, { required: true }),
    projects: f.refs('projects', { target: 'project' }),
    startDate: f.date({ nullable: true }),
    endDate: f.date({ nullable: true }),
    options: f.json(optionsSchema, { nullable: true }),
    createdById: f.readOnly('text', { nullable: true }),
  },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    type: { ops: ['eq', 'in'] },
    projectId: { ops: ['eq', 'in'], relation: 'projects' },
    createdById: { ops: ['eq', 'in'] },
    startDate: { ops: ['null', 'notNull', ...RANGE] },
    endDate: { ops: ['null', 'notNull', ...RANGE] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  sortable: ['name'],
  defaultSort: 'name',
  expand: {
    createdBy: { kind: 'one', target: 'member', field: 'createdById' },
  },
  hooks: {
    beforeCreate(ctx, input) {
      input.startDate ??= null;
      input.endDate ??= null;
      input.options ??= null;
      input.createdById = ctx.principal.memberId;
      dateRange(input);
    },
    async beforeUpdate(ctx, current, patch) {
      await opensEveryProject(ctx, current);
      dateRange({ ...current, ...patch });
    },
    async beforeLinksChange(ctx, rec) {
      await opensEveryProject(ctx, rec);
    },
    async beforeDelete(ctx, rec) {
      await opensEveryProject(ctx, rec);
    },
  },
});

/** endDate, when both are set, is on or after startDate. */
function dateRange(merged: { startDate?: string | null; endDate?: string | null }) {
  if (typeof merged.startDate === 'string' && typeof merged.endDate === 'string' && merged.endDate < merged.startDate) {
    throw fieldError('endDate', 'before_start', 'endDate must be on or after startDate');
  }
}

/** 403 project_access_denied (naming the first such project) unless the caller opens every project the chart spans: one query. */
async function opensEveryProject(ctx: WriteContext, chart: Rec): Promise<void> {
  if (ctx.access.seesAll) return;
  const ids = (await ctx.repo.linksOf(REPORT_CHART_PROJECTS, [chart.id])).get(chart.id) ?? [];
  if (ids.length === 0) return;
  const open = await ctx.access.filterOpen(ids);
  const closed = ids.find((id) => !open.has(id));
  if (closed !== undefined) throw new ProblemError('project_access_denied', `You have no access to project ${closed}`, { projectId: closed });
}
