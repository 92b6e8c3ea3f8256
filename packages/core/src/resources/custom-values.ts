import { z } from 'zod';
import { notFound, validationError, type FieldError } from '../errors/problem';
import { patchRecord } from '../services/records';
import { EXPAND_ROW_BUDGET, materialize } from '../services/serialize';
import type { ExpandDef, Rec } from './define-resource';
import type { ReadContext, WriteContext } from './hooks';

/*
 * The `customFields` entries lists, tasks and projects carry (spec "List",
 * "Task", "Project": {customFieldId, value}, value always a string, empty
 * string clears, at most 50 entries per request), checked against the
 * custom field resource, and the project's column keys (hiddenListColumns,
 * listColumnsOrder, *CustomFieldsOrder). Decisions: docs/not-shown.md
 * "Custom fields".
 */

export type CustomValue = { customFieldId: string; value: string };
export type CustomFieldOption = { id: string; label: string; color: string | null };
export type CustomValueHolder = 'task' | 'list' | 'project';

/** The built-in list column keys (spec "Project": hiddenListColumns, listColumnsOrder). */
export const BUILTIN_LIST_COLUMNS = ['name', 'assignee', 'dueDate', 'status', 'list', 'labels', 'estimate'] as const;
const BUILTIN = new Set<string>(BUILTIN_LIST_COLUMNS);
/** Project fields holding column keys: built-in keys or custom field ids. */
const COLUMN_FIELDS = ['hiddenListColumns', 'listColumnsOrder'] as const;
/** Project fields holding custom field ids only. */
const ORDER_FIELDS = ['customFieldsOrder', 'taskCustomFieldsOrder', 'listCustomFieldsOrder'] as const;

/**
 * The index of which rows may hold a field: links of kind
 * `customField:{holder}`, parent the custom field, related the row. Written
 * whenever a row takes a value of (or, for projects, a column key naming) a
 * field; read when the field or one of its options goes. A stale entry
 * (a row destroyed since) is harmless: the rows are read and checked.
 */
const indexKind = (holder: CustomValueHolder) => `customField:${holder}`;
const HOLDERS: readonly CustomValueHolder[] = ['task', 'list', 'project'];

const entriesOf = (rec: Rec | Record<string, unknown>): CustomValue[] => (Array.isArray(rec.customFields) ? (rec.customFields as CustomValue[]) : []);

const URL_VALUE = z.url({ protocol: /^https?$/ }).max(2048);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const NUMBER = /^-?\d{1,30}(\.\d{1,30})?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Why `value` is not a value of the field (undefined: it is). */
function valueProblem(field: Rec, value: string): string | undefined {
  switch (field.type) {
    case 'number':
      return NUMBER.test(value) ? undefined : 'must be a decimal number such as -12.5, as a string';
    case 'date': {
      const m = DATE.exec(value);
      if (m) {
        const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
        const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
        const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
        if (days !== undefined && d >= 1 && d <= days) return undefined;
      }
      return 'must be a calendar date YYYY-MM-DD';
    }
    case 'checkbox':
      return value === 'true' || value === 'false' ? undefined : 'must be "true" or "false"';
    case 'dropdown':
      return (field.options as CustomFieldOption[]).some((o) => o.id === value) ? undefined : 'must be the id of one of the field\'s options';
    case 'url':
      return URL_VALUE.safeParse(value).success ? undefined : 'must be an http(s) URL of at most 2048 characters';
    case 'email':
      return value.length <= 254 && EMAIL.test(value) ? undefined : 'must be an e-mail address';
    default:
      return undefined;
  }
}

/** Is the field attached to the project (workspace-wide, or that project's own)? `null`: a project being created (workspace-wide fields only). */
const attached = (field: Rec, projectId: string | null) => field.projectId === null || field.projectId === projectId;

/**
 * Merge sent entries into a row's values: an entry names a custom field of
 * this workspace (404 resource_not_found naming `customFields.N.customFieldId`
 * otherwise, another workspace's too), attached to the row's project
 * (`not_attached`), at most once (`duplicate`); its value must suit the
 * field's type (`invalid_value`), and "" clears the field's value. Values
 * of fields not named stay; `null` clears them all.
 */
async function mergeValues(ctx: WriteContext, projectId: string | null, base: readonly CustomValue[], sent: readonly CustomValue[] | null): Promise<CustomValue[]> {
  if (sent === null) return [];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  sent.forEach((e, i) => {
    if (seen.has(e.customFieldId)) errors.push({ field: `customFields.${i}.customFieldId`, code: 'duplicate', message: 'names a custom field another entry of this request names' });
    seen.add(e.customFieldId);
  });
  const fields = await lockedFields(ctx, [...seen], projectId);
  sent.forEach((e, i) => {
    if (!fields.has(e.customFieldId)) throw notFound('customField', e.customFieldId, `customFields.${i}.customFieldId`);
  });
  sent.forEach((e, i) => {
    const field = fields.get(e.customFieldId)!;
    if (!attached(field, projectId)) {
      errors.push({ field: `customFields.${i}.customFieldId`, code: 'not_attached', message: 'the custom field belongs to another project' });
      return;
    }
    const why = e.value === '' ? undefined : valueProblem(field, e.value);
    if (why) errors.push({ field: `customFields.${i}.value`, code: 'invalid_value', message: `${field.type} field: ${why}` });
  });
  if (errors.length) throw validationError(errors);
  const out = base.map((e) => ({ ...e }));
  for (const e of sent) {
    const at = out.findIndex((x) => x.customFieldId === e.customFieldId);
    if (e.value === '') {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = { customFieldId: e.customFieldId, value: e.value };
    else out.push({ customFieldId: e.customFieldId, value: e.value });
  }
  return out;
}

/**
 * The custom fields with these ids; those attached to the project (the
 * ones this write may store) are read again under a row lock, in id order,
 * held until the write commits: a concurrent deletion of one of them (or of
 * one of its options) either waits for this write and then cleans the value
 * it wrote, or commits first and this write no longer finds it.
 */
async function lockedFields(ctx: WriteContext, ids: readonly string[], projectId: string | null): Promise<Map<string, Rec>> {
  const res = ctx.registry.get('customField');
  const out = new Map<string, Rec>();
  // One read finds them; only the attached ones (the ones this write may store) are locked and read again.
  const lock: string[] = [];
  for (const found of await ctx.repo.getMany(res, ctx.teamId, [...new Set(ids)])) {
    if (attached(found, projectId)) lock.push(found.id);
    else out.set(found.id, found);
  }
  for (const id of lock.sort()) {
    const f = await ctx.repo.get(res, ctx.teamId, id, { lock: true });
    if (f) out.set(id, f);
  }
  return out;
}

/** The values whose fields are attached to the project (a task moving to another project keeps only those). */
async function keepAttached(ctx: WriteContext, entries: readonly CustomValue[], projectId: string): Promise<CustomValue[]> {
  if (entries.length === 0) return [];
  const fields = new Map((await ctx.repo.getMany(ctx.registry.get('customField'), ctx.teamId, entries.map((e) => e.customFieldId))).map((f) => [f.id, f]));
  return entries.filter((e) => {
    const f = fields.get(e.customFieldId);
    return f !== undefined && attached(f, projectId);
  });
}

/**
 * Project column keys: hiddenListColumns and listColumnsOrder hold built-in
 * keys or ids of custom fields attached to the project (`unknown_column`);
 * the *CustomFieldsOrder fields hold attached custom field ids only
 * (`unknown_custom_field`); a key appears once in an array (`duplicate`).
 */
async function checkColumnKeys(ctx: WriteContext, projectId: string | null, values: Record<string, unknown>): Promise<void> {
  const arrays = [...COLUMN_FIELDS, ...ORDER_FIELDS].filter((k) => Array.isArray(values[k]));
  if (arrays.length === 0) return;
  const ids = new Set<string>();
  for (const k of arrays) for (const key of values[k] as string[]) if (!BUILTIN.has(key) || !(COLUMN_FIELDS as readonly string[]).includes(k)) ids.add(key);
  const fields = await lockedFields(ctx, [...ids], projectId);
  const errors: FieldError[] = [];
  for (const k of arrays) {
    const columns = (COLUMN_FIELDS as readonly string[]).includes(k);
    const seen = new Set<string>();
    (values[k] as string[]).forEach((key, i) => {
      if (seen.has(key)) {
        errors.push({ field: `${k}.${i}`, code: 'duplicate', message: 'appears twice' });
        return;
      }
      seen.add(key);
      if (columns && BUILTIN.has(key)) return;
      const f = fields.get(key);
      if (f && attached(f, projectId)) return;
      errors.push(columns
        ? { field: `${k}.${i}`, code: 'unknown_column', message: `must be a built-in column (${BUILTIN_LIST_COLUMNS.join(', ')}) or the id of a custom field attached to this project` }
        : { field: `${k}.${i}`, code: 'unknown_custom_field', message: 'must be the id of a custom field attached to this project' });
    });
  }
  if (errors.length) throw validationError(errors);
}

/** The custom field ids a row refers to: its values, and a project's column keys. */
function referencedIds(holder: CustomValueHolder, rec: Record<string, unknown>): Set<string> {
  const out = new Set(entriesOf(rec).map((e) => e.customFieldId));
  if (holder === 'project') {
    for (const k of [...COLUMN_FIELDS, ...ORDER_FIELDS]) {
      if (Array.isArray(rec[k])) for (const key of rec[k] as string[]) if (!BUILTIN.has(key)) out.add(key);
    }
  }
  return out;
}

/** beforeCreate of a holder: check and merge `customFields` ([] when none), and a project's column keys. `projectId` null: a project being created. */
export async function prepareCustomValuesOnCreate(ctx: WriteContext, holder: CustomValueHolder, projectId: string | null, input: Record<string, unknown>): Promise<void> {
  input.customFields = input.customFields === undefined ? [] : await mergeValues(ctx, projectId, [], input.customFields as CustomValue[] | null);
  if (holder === 'project') await checkColumnKeys(ctx, projectId, input);
}

/**
 * beforeUpdate of a holder (after its project is known: a task's move
 * target): sent entries merge into the stored ones; a task moving to
 * another project drops the values of fields not attached there.
 */
export async function prepareCustomValuesOnUpdate(ctx: WriteContext, holder: CustomValueHolder, projectId: string, current: Rec, patch: Record<string, unknown>): Promise<void> {
  let base = entriesOf(current);
  const moved = holder === 'task' && projectId !== current.projectId;
  if (moved) base = await keepAttached(ctx, base, projectId);
  if ('customFields' in patch) patch.customFields = await mergeValues(ctx, projectId, base, patch.customFields as CustomValue[] | null);
  else if (moved && base.length !== entriesOf(current).length) patch.customFields = base;
  if (holder === 'project') await checkColumnKeys(ctx, projectId, patch);
}

/** A subtask following its parent to another project: the values it keeps (nothing to change: `{}`). */
export async function customValuesAfterMove(ctx: WriteContext, task: Rec, projectId: string): Promise<{ customFields?: CustomValue[] }> {
  const kept = await keepAttached(ctx, entriesOf(task), projectId);
  return kept.length === entriesOf(task).length ? {} : { customFields: kept };
}

/** afterCreate / afterUpdate of a holder: index the fields the row newly refers to. */
export async function indexCustomValues(ctx: WriteContext, holder: CustomValueHolder, before: Rec | undefined, after: Rec): Promise<void> {
  const had = before ? referencedIds(holder, before) : new Set<string>();
  for (const id of referencedIds(holder, after)) {
    if (!had.has(id)) await ctx.repo.addLinks(indexKind(holder), ctx.teamId, id, [after.id], ctx.now);
  }
}

/**
 * A custom field going (or some of its dropdown options, `values`): its
 * values leave every task, list and project holding them (and, when the
 * field goes, its id leaves projects' column keys). Live rows change with
 * their `updated` event; trashed projects are corrected quietly.
 */
export async function forgetCustomField(ctx: WriteContext, fieldId: string, opts: { values?: ReadonlySet<string> } = {}): Promise<void> {
  const hit = (e: CustomValue) => e.customFieldId === fieldId && (!opts.values || opts.values.has(e.value));
  for (const holder of HOLDERS) {
    const res = ctx.registry.get(holder);
    const rowIds = (await ctx.repo.linksOf(indexKind(holder), [fieldId])).get(fieldId) ?? [];
    const rows = await ctx.repo.findBy(res, ctx.teamId, 'id', rowIds, { includeTrashed: true });
    for (const row of rows) {
      const change: Record<string, unknown> = {};
      const entries = entriesOf(row);
      if (entries.some(hit)) change.customFields = entries.filter((e) => !hit(e));
      if (holder === 'project' && !opts.values) {
        for (const k of [...COLUMN_FIELDS, ...ORDER_FIELDS]) {
          const keys = row[k];
          if (Array.isArray(keys) && keys.includes(fieldId)) change[k] = keys.filter((x) => x !== fieldId);
        }
      }
      if (Object.keys(change).length === 0) continue;
      if (typeof row.purgeAt === 'number') await ctx.repo.update(res, ctx.teamId, row.id, change);
      else await patchRecord(ctx, res, row, change);
    }
    if (!opts.values) await ctx.repo.dropLinks({ kinds: [indexKind(holder)], parentIds: [fieldId] });
  }
}

/**
 * `expand=customFields` on tasks, lists and projects: the row's entries,
 * each with its custom field record beside the value
 * (`{customFieldId, value, customField}`), in the row's order.
 */
export const customFieldsExpand: ExpandDef = {
  kind: 'entries',
  reads: 'customField',
  async load(ctx: ReadContext, recs: readonly Rec[]): Promise<Map<string, unknown[]>> {
    const res = ctx.registry.get('customField');
    const ids = [...new Set(recs.flatMap((r) => entriesOf(r).map((e) => e.customFieldId)))];
    const found = await ctx.access.filterRecords(res, await ctx.repo.getMany(res, ctx.teamId, ids));
    const shown = await materialize(ctx, res, found, { expand: { children: new Map() }, fields: new Map(), budget: { used: 0, max: EXPAND_ROW_BUDGET } });
    const byId = new Map(found.map((f, i) => [f.id, shown[i]!]));
    const out = new Map<string, unknown[]>();
    for (const r of recs) {
      out.set(r.id, entriesOf(r).filter((e) => byId.has(e.customFieldId)).map((e) => ({ customFieldId: e.customFieldId, value: e.value, customField: byId.get(e.customFieldId) })));
    }
    return out;
  },
};
