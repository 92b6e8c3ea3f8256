import { z } from 'zod';
import { ProblemError } from '../errors/problem';
import { grants } from '../auth/scopes';
import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import type { WriteContext } from './hooks';
import { fieldError } from './rules';
import { forgetCustomField, type CustomFieldOption } from './custom-values';

/*
 * Custom fields (spec "Other resources": named, fields not shown; lists,
 * tasks and projects carry `customFields` entries of {customFieldId, value}).
 * The design is recorded in docs/not-shown.md "Custom fields": a typed field
 * definition, attached to every project of the workspace (`projectId` null)
 * or to one project; hard-deleted, its values go with it. The spec's
 * lifecycle list does not name custom fields, so they emit no events.
 */

export const CUSTOM_FIELD_TYPES = ['text', 'number', 'date', 'dropdown', 'checkbox', 'url', 'email'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];
export const CUSTOM_FIELD_NAME_MAX = 100;
export const CUSTOM_FIELD_DESCRIPTION_MAX = 5_000;
export const CUSTOM_FIELD_OPTIONS_MAX = 100;
export const CUSTOM_FIELD_OPTION_LABEL_MAX = 100;
/** Most workspace-wide fields, and most fields attached to one project alone. */
export const CUSTOM_FIELDS_PER_SCOPE_MAX = 100;

const ID = z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64);
const HEX6 = /^#[0-9A-Fa-f]{6}$/;

/** A dropdown option as sent: `id` to keep an existing option, none for a new one. */
const optionInput = z.strictObject({
  id: ID.optional(),
  label: z.string().trim().min(1, 'must not be empty').max(CUSTOM_FIELD_OPTION_LABEL_MAX, `must be at most ${CUSTOM_FIELD_OPTION_LABEL_MAX} characters`),
  color: z.string().regex(HEX6, 'must be a 6-digit hex colour like #1a2b3c').nullable().optional(),
});
type OptionInput = z.output<typeof optionInput>;

export const customFieldResource = defineResource({
  name: 'customField',
  path: 'custom-fields',
  // Not in the spec's lifecycle list (Events): no custom-field events.
  events: false,
  policy: { regular: ['read', 'write'], client: ['read'] },
  fields: {
    name: f.string({ trim: true, min: 1, max: CUSTOM_FIELD_NAME_MAX, required: true }),
    type: f.enum(CUSTOM_FIELD_TYPES, { required: true, mode: 'createOnly' }),
    description: f.string({ max: CUSTOM_FIELD_DESCRIPTION_MAX, nullable: true }),
    options: f.json(z.array(optionInput).max(CUSTOM_FIELD_OPTIONS_MAX, `must hold at most ${CUSTOM_FIELD_OPTIONS_MAX} options`)),
    projectId: f.ref('project', { nullable: true, mode: 'createOnly', onDelete: 'cascade' }),
  },
  projectField: 'projectId',
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    type: { ops: ['eq', 'in'] },
    projectId: { ops: ['eq', 'in', 'null', 'notNull'] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  sortable: ['name'],
  defaultSort: 'name',
  hooks: {
    async beforeCreate(ctx, input) {
      const projectId = input.projectId ?? null;
      input.projectId = projectId;
      input.description ??= null;
      // One create at a time per workspace: the name and cap checks below see every earlier one.
      await ctx.repo.lock('workspaces', ctx.teamId);
      await assertUniqueName(ctx, input.name!, projectId);
      const same = await ctx.repo.findWhere(ctx.registry.get('customField'), ctx.teamId, { projectId }, { limit: CUSTOM_FIELDS_PER_SCOPE_MAX + 1 });
      if (same.length >= CUSTOM_FIELDS_PER_SCOPE_MAX) {
        throw fieldError('projectId', 'custom_field_cap_reached', projectId === null
          ? `a workspace holds at most ${CUSTOM_FIELDS_PER_SCOPE_MAX} workspace-wide custom fields`
          : `a project holds at most ${CUSTOM_FIELDS_PER_SCOPE_MAX} custom fields of its own`);
      }
      input.options = resolveOptions(ctx, input.type!, input.options as OptionInput[] | undefined, []);
    },
    async beforeUpdate(ctx, current, patch) {
      if (typeof patch.name === 'string' && patch.name !== current.name) {
        await ctx.repo.lock('workspaces', ctx.teamId);
        await assertUniqueName(ctx, patch.name, current.projectId, current.id);
      }
      if ('options' in patch) {
        const options = resolveOptions(ctx, current.type, patch.options as OptionInput[], current.options as CustomFieldOption[]);
        const kept = new Set(options.map((o) => o.id));
        if ((current.options as CustomFieldOption[]).some((o) => !kept.has(o.id))) assertMayDelete(ctx);
        patch.options = options;
      }
    },
    async afterUpdate(ctx, before, after) {
      // Values naming a dropdown option that is gone are cleared.
      const kept = new Set((after.options as CustomFieldOption[]).map((o) => o.id));
      const dropped = (before.options as CustomFieldOption[]).filter((o) => !kept.has(o.id)).map((o) => o.id);
      if (dropped.length) await forgetCustomField(ctx, after.id, { values: new Set(dropped) });
    },
    async beforeDestroy(ctx, rec) {
      await forgetCustomField(ctx, rec.id);
    },
  },
});

/**
 * Removing dropdown options clears their values from every row, in projects
 * the caller may not open too: it needs what deleting the field needs, the
 * `custom-fields:delete` permission (role and token), else 403 permission_denied.
 */
function assertMayDelete(ctx: WriteContext): void {
  const { permissions, scopes } = ctx.principal;
  if (grants(permissions, 'custom-fields', 'delete') && grants(scopes, 'custom-fields', 'delete')) return;
  throw new ProblemError('permission_denied', 'Removing dropdown options clears their values everywhere, as deleting the field does: it needs custom-fields:delete', {
    missingPermissions: ['custom-fields:delete'],
  });
}

/**
 * The options a body asks for, in order: only dropdowns have options
 * (`not_allowed` otherwise); an `id` must name an option of this field
 * (`unknown_option`) once (`duplicate`); labels are unique in the field
 * (case-insensitive, `duplicate`); options without an id are new.
 */
function resolveOptions(ctx: WriteContext, type: string, sent: OptionInput[] | undefined, current: readonly CustomFieldOption[]): CustomFieldOption[] {
  if (type !== 'dropdown') {
    if (sent !== undefined && sent.length > 0) throw fieldError('options', 'not_allowed', 'only dropdown fields have options');
    return [];
  }
  if (sent === undefined) return [...current];
  const known = new Set(current.map((o) => o.id));
  const ids = new Set<string>();
  const labels = new Set<string>();
  return sent.map((o, i) => {
    if (o.id !== undefined) {
      if (!known.has(o.id)) throw fieldError(`options.${i}.id`, 'unknown_option', 'is not an option of this field; leave id out for a new option');
      if (ids.has(o.id)) throw fieldError(`options.${i}.id`, 'duplicate', 'appears twice');
      ids.add(o.id);
    }
    const folded = o.label.toLowerCase();
    if (labels.has(folded)) throw fieldError(`options.${i}.label`, 'duplicate', 'another option of this field has this label');
    labels.add(folded);
    return { id: o.id ?? ctx.ids.id(), label: o.label, color: o.color ? o.color.toLowerCase() : null };
  });
}

/**
 * A name is unique among the fields a project shows: a workspace-wide
 * field's among all fields of the workspace, a project's among that
 * project's and the workspace-wide ones (409 conflict naming `name`).
 */
async function assertUniqueName(ctx: WriteContext, name: string, projectId: string | null, exceptId?: string): Promise<void> {
  const same = await ctx.repo.findWhere(ctx.registry.get('customField'), ctx.teamId, { name }, exceptId ? { exceptId } : {});
  const clash = same.find((c) => projectId === null || c.projectId === null || c.projectId === projectId);
  if (!clash) return;
  // A field of a project the caller cannot open is not named (no id, no project).
  const visible = clash.projectId === null || (await ctx.access.filterRecords(ctx.registry.get('customField'), [clash])).length > 0;
  if (!visible) throw new ProblemError('conflict', `A custom field named '${name}' already exists where this field would be shown`, { field: 'name' });
  throw new ProblemError('conflict', `A custom field named '${name}' already exists ${clash.projectId ? `in project ${clash.projectId}` : 'in this workspace'}`, { field: 'name', id: clash.id });
}
