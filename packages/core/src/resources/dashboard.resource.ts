import { z } from 'zod';
import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import type { WriteContext } from './hooks';
import { fieldError } from './rules';
import { ProblemError } from '../errors/problem';
import { patchRecord } from '../services/records';

/*
 * Project dashboards (spec "Project Dashboard"): a project's boards of
 * widget cards; hard-deleted, widgets with them. Rules stated: name at most
 * 100 characters; projectId set once; isShared false makes it private to its
 * creator; at most one default per project, and setting isDefault true
 * forces isShared true and clears the previous default; widgets is a
 * replace-the-set array whose index is each widget's position. Widget fields
 * are "not shown": docs/not-shown.md "Project dashboards".
 */

export const DASHBOARD_NAME_MAX = 100;
export const WIDGETS_MAX = 50;
export const WIDGET_TYPES = ['tasks', 'chart', 'text', 'timeline', 'members', 'files', 'documents', 'milestones', 'embed'] as const;
/** Largest `config` of one widget, as JSON text. */
export const WIDGET_CONFIG_MAX_BYTES = 8 * 1024;

const ID = z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64);

/** A widget as sent: `id` to keep an existing one (its type cannot change), else a new one. */
const widgetInput = z.strictObject({
  id: ID.optional(),
  type: z.enum(WIDGET_TYPES),
  title: z.string().trim().max(100, 'must be at most 100 characters').nullable().optional(),
  config: z.record(z.string().max(64), z.unknown()).optional()
    .refine((c) => c === undefined || Buffer.byteLength(JSON.stringify(c)) <= WIDGET_CONFIG_MAX_BYTES, {
      message: `must be at most ${WIDGET_CONFIG_MAX_BYTES} bytes as JSON`, params: { code: 'too_big' },
    }),
});

export type Widget = { id: string; type: (typeof WIDGET_TYPES)[number]; title: string | null; config: Record<string, unknown>; position: number };

/**
 * The widget set a body asks for, in order (position = index): ids sent
 * must be widgets of this dashboard (`unknown_widget`) and appear once
 * (`duplicate_widget`), and keep their type (`immutable`); widgets without
 * an id are new and get one.
 */
function resolveWidgets(ctx: WriteContext, sent: z.output<typeof widgetInput>[], current: readonly Widget[]): Widget[] {
  const byId = new Map(current.map((w) => [w.id, w]));
  const seen = new Set<string>();
  return sent.map((w, position) => {
    if (w.id !== undefined) {
      const old = byId.get(w.id);
      if (!old) throw fieldError(`widgets.${position}.id`, 'unknown_widget', 'is not a widget of this dashboard; leave id out for a new widget');
      if (seen.has(w.id)) throw fieldError(`widgets.${position}.id`, 'duplicate_widget', 'appears twice');
      if (old.type !== w.type) throw fieldError(`widgets.${position}.type`, 'immutable', 'a widget keeps its type; add a new widget instead');
      seen.add(w.id);
    }
    return { id: w.id ?? ctx.ids.id(), type: w.type, title: w.title ?? null, config: w.config ?? {}, position };
  });
}

/** Clear the project's other default dashboard (each with projectDashboard.updated). */
async function clearDefault(ctx: WriteContext, projectId: unknown, except?: string): Promise<void> {
  const res = ctx.registry.get('projectDashboard');
  const others = await ctx.repo.findWhere(res, ctx.teamId, { projectId, isDefault: true }, except ? { exceptId: except } : {});
  for (const d of others) await patchRecord(ctx, res, d, { isDefault: false });
}

export const projectDashboardResource = defineResource({
  name: 'projectDashboard',
  path: 'project-dashboards',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    name: f.string({ trim: true, min: 1, max: DASHBOARD_NAME_MAX, required: true }),
    projectId: f.ref('project', { mode: 'createOnly', onDelete: 'cascade' }),
    isShared: f.boolean(),
    isDefault: f.boolean(),
    widgets: f.json(z.array(widgetInput).max(WIDGETS_MAX, `at most ${WIDGETS_MAX} widgets`)),
    createdById: f.readOnly('text', { nullable: true }),
  },
  projectField: 'projectId',
  listParams: { projectId: {} },
  privateTo: { field: 'isShared', value: false, owner: 'createdById' },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    isShared: { ops: ['eq'] },
    isDefault: { ops: ['eq'] },
    projectId: { ops: ['eq', 'in'] },
    createdById: { ops: ['eq', 'in'] },
    createdAt: { ops: RANGE },
  },
  defaultSort: 'createdAt',
  defaultSortWithoutProject: '-updatedAt',
  hooks: {
    async beforeCreate(ctx, input) {
      if (typeof input.projectId !== 'string') throw new ProblemError('project_not_specified', 'A dashboard needs a projectId');
      input.isDefault ??= false;
      // States table "Project dashboard": setting isDefault true forces isShared true and clears the previous default.
      input.isShared = input.isDefault ? true : (input.isShared ?? true);
      if (input.isDefault) {
        await ctx.repo.lock('projects', input.projectId);
        await clearDefault(ctx, input.projectId);
      }
      input.widgets = resolveWidgets(ctx, (input.widgets ?? []) as z.output<typeof widgetInput>[], []) as never;
      input.createdById = ctx.principal.memberId;
    },
    async beforeUpdate(ctx, current, patch) {
      // Only its creator makes a shared dashboard private: from anyone else it would vanish for every member but the creator, the caller included.
      if (patch.isShared === false && current.isShared !== false && current.createdById !== ctx.principal.memberId) {
        throw new ProblemError('permission_denied', 'Only the creator of a dashboard can make it private', { missingPermissions: [], field: 'isShared' });
      }
      if (patch.isDefault === true) {
        // States table: becoming (or staying) the default forces isShared true.
        patch.isShared = true;
        if (!current.isDefault) {
          await ctx.repo.lock('projects', current.projectId);
          await clearDefault(ctx, current.projectId, current.id);
        }
      } else if (patch.isShared === false && (patch.isDefault ?? current.isDefault)) {
        // The default is what every project member lands on: it cannot turn private while it is the default.
        throw fieldError('isShared', 'default_must_be_shared', 'the default dashboard is shared with the project; make another dashboard the default, or send isDefault false with it');
      }
      // Replace semantics: the array is the whole set; widgets left out are gone.
      if (patch.widgets !== undefined) patch.widgets = resolveWidgets(ctx, patch.widgets as z.output<typeof widgetInput>[], current.widgets as unknown as Widget[]) as never;
    },
  },
});

export type { Rec };
