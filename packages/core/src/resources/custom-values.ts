import { z } from 'zod';
import { notFound, ProblemError, validationError, type FieldError } from '../errors/problem';
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
 * The index of which rows refer to a field: links of kind
 * `customValues:{holder}`, parent the row, related the custom field (found
 * by field through the links_related index). It holds exactly the fields a
 * live row's values and (projects) column keys name: kept in step on every
 * write of the row (only the difference between before and after is
 * written), dropped with the row, read when the field or one of its
 * options goes. The rows found are re-read under a lock and checked.
 */
const indexKind = (holder: CustomValueHolder) => `customValues:${holder}`;
const HOLDERS: readonly CustomValueHolder[] = ['task', 'list', 'project'];

/** Most bytes a row's `customFields` may take as JSON (UTF-8): keeps a row's events well under the 1 MiB webhook payload cap. */
export const CUSTOM_FIELDS_BYTES_MAX = 256 * 1024;
/** `expand=customFields`: each embedded field record counts one expand row per started KiB of its JSON. */
const EXPAND_ENTRY_BYTES = 1024;

const utf8 = new TextEncoder();
const jsonBytes = (v: unknown) => utf8.encode(JSON.stringify(v)).length;

const entriesOf = (rec: Rec | Record<string, unknown>): CustomValue[] => (Array.isArray(rec.customFields) ? (rec.customFields as CustomValue[]) : []);

const URL_VALUE = z.url({ protocol: /^https?$/ }).max(2048);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const NUMBER = /^-?\d{1,30}(\.\d{1,30})?$/;
const DATE = z.iso.date();

/** Why `value` is not a value of the field (undefined: it is). */
function valueProblem(field: Rec, value: string): string | undefined {
  switch (field.type) {
    case 'number':
      return NUMBER.test(value) ? undefined : 'must be a decimal number such as -12.5, as a string';
    case 'date':
      return DATE.safeParse(value).success ? undefined : 'must be a calendar date YYYY-MM-DD';
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
  const fields = await lockedFields(ctx, [...seen]);
  await forgetHidden(ctx, fields, projectId);
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
  const bytes = jsonBytes(out);
  if (bytes > CUSTOM_FIELDS_BYTES_MAX) {
    throw validationError([{ field: 'customFields', code: 'too_big', message: `the row's custom field values would take ${bytes} bytes as JSON; at most ${CUSTOM_FIELDS_BYTES_MAX}` }]);
  }
  return out;
}

/**
 * The custom fields with these ids, read in one statement under a key-share
 * lock held until the write commits (writers of one field do not wait for
 * each other): a concurrent deletion of one of them, or of one of its
 * options, either waits for this write and then cleans the value it wrote,
 * or commits first and this write no longer finds it (or the option). An
 * update takes these locks before its row's own ({@link lockCustomFieldsFirst}),
 * the order a deletion takes them in (the field, then the rows), so the two
 * never deadlock.
 */
async function lockedFields(ctx: WriteContext, ids: readonly string[]): Promise<Map<string, Rec>> {
  const res = ctx.registry.get('customField');
  const found = await ctx.repo.getMany(res, ctx.teamId, [...new Set(ids)], undefined, { lock: 'share' });
  return new Map(found.map((f) => [f.id, f]));
}

/** Leave out the fields of projects the caller cannot open (other than the row's own project's): they answer as unknown ones. */
async function forgetHidden(ctx: WriteContext, fields: Map<string, Rec>, projectId: string | null): Promise<void> {
  const others = [...fields.values()].filter((f) => !attached(f, projectId));
  if (others.length === 0) return;
  const open = new Set((await ctx.access.filterRecords(ctx.registry.get('customField'), others)).map((f) => f.id));
  for (const f of others) if (!open.has(f.id)) fields.delete(f.id);
}

/** The custom field ids an update body names (values and a project's column keys), as sent. */
function namedIn(holder: CustomValueHolder, body: unknown): string[] {
  if (typeof body !== 'object' || body === null) return [];
  const b = body as Record<string, unknown>;
  const out = new Set<string>();
  if (Array.isArray(b.customFields)) {
    for (const e of b.customFields.slice(0, 50)) {
      const id = (e as { customFieldId?: unknown } | null)?.customFieldId;
      if (typeof id === 'string') out.add(id);
    }
  }
  if (holder === 'project') {
    for (const k of [...COLUMN_FIELDS, ...ORDER_FIELDS]) {
      if (Array.isArray(b[k])) for (const key of (b[k] as unknown[]).slice(0, 250)) if (typeof key === 'string' && !BUILTIN.has(key)) out.add(key);
    }
  }
  return [...out];
}

/** `lockFirst` of a holder: key-share lock the custom fields the body names before the row is locked (see {@link lockedFields}). */
export async function lockCustomFieldsFirst(ctx: WriteContext, holder: CustomValueHolder, body: unknown): Promise<void> {
  const ids = namedIn(holder, body);
  if (ids.length) await lockedFields(ctx, ids);
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
  const fields = await lockedFields(ctx, [...ids]);
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

/**
 * Subtasks following their parent to another project: per subtask whose
 * values change, the values it keeps (one read of the fields for the whole
 * subtree); the index drops the fields they no longer hold.
 */
export async function customValuesAfterMove(ctx: WriteContext, tasks: readonly Rec[], projectId: string): Promise<Map<string, { customFields: CustomValue[] }>> {
  const out = new Map<string, { customFields: CustomValue[] }>();
  const ids = [...new Set(tasks.flatMap((t) => entriesOf(t).map((e) => e.customFieldId)))];
  if (ids.length === 0) return out;
  const fields = new Map((await ctx.repo.getMany(ctx.registry.get('customField'), ctx.teamId, ids)).map((f) => [f.id, f]));
  for (const t of tasks) {
    const entries = entriesOf(t);
    const kept = entries.filter((e) => {
      const f = fields.get(e.customFieldId);
      return f !== undefined && attached(f, projectId);
    });
    if (kept.length === entries.length) continue;
    out.set(t.id, { customFields: kept });
    await indexCustomValues(ctx, 'task', t, { ...t, customFields: kept });
  }
  return out;
}

/** afterCreate / afterUpdate of a holder: the index follows the fields the row refers to (only the difference is written). */
export async function indexCustomValues(ctx: WriteContext, holder: CustomValueHolder, before: Rec | undefined, after: Rec): Promise<void> {
  const had = before ? referencedIds(holder, before) : new Set<string>();
  const has = referencedIds(holder, after);
  const added = [...has].filter((id) => !had.has(id));
  const gone = [...had].filter((id) => !has.has(id));
  if (added.length) await ctx.repo.addLinks(indexKind(holder), ctx.teamId, after.id, added, ctx.now);
  if (gone.length) await ctx.repo.removeLinks(indexKind(holder), after.id, gone);
}

/** Rows of a holder destroyed for good: their index entries go with them. */
export async function dropCustomValueIndex(ctx: WriteContext, holder: CustomValueHolder, rowIds: readonly string[]): Promise<void> {
  for (let i = 0; i < rowIds.length; i += 500) await ctx.repo.dropLinks({ kinds: [indexKind(holder)], parentIds: rowIds.slice(i, i + 500) });
}

/**
 * A custom field going (or some of its dropdown options, `values`): its
 * values leave every task, list and project holding them (and, when the
 * field goes, its id leaves projects' column keys). Live rows change with
 * their `updated` event; trashed projects are corrected quietly. Called with
 * the field row locked (the delete or update locked it first); each row is
 * then locked and read again, in id order, and changed from what it holds
 * now (a value written meanwhile stays).
 */
export async function forgetCustomField(ctx: WriteContext, fieldId: string, opts: { values?: ReadonlySet<string> } = {}): Promise<void> {
  const hit = (e: CustomValue) => e.customFieldId === fieldId && (!opts.values || opts.values.has(e.value));
  for (const holder of HOLDERS) {
    const res = ctx.registry.get(holder);
    for (const rowId of await ctx.repo.parentsOf(indexKind(holder), fieldId)) {
      const row = await ctx.repo.get(res, ctx.teamId, rowId, { lock: true, includeTrashed: true });
      if (!row) continue;
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
      if (opts.values) await indexCustomValues(ctx, holder, row, { ...row, ...change });
    }
    if (!opts.values) await ctx.repo.dropLinks({ kinds: [indexKind(holder)], relatedIds: [fieldId] });
  }
}

/**
 * `expand=customFields` on tasks, lists and projects: the row's entries,
 * each with its custom field record beside the value
 * (`{customFieldId, value, customField}`), in the row's order. Each entry
 * counts against the expand row budget one row per started KiB of its
 * field record (a long description, many options): the response stays bounded.
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
    const weight = new Map(found.map((f, i) => [f.id, Math.max(1, Math.ceil(jsonBytes(shown[i]) / EXPAND_ENTRY_BYTES))]));
    let used = 0;
    for (const r of recs) for (const e of entriesOf(r)) used += weight.get(e.customFieldId) ?? 0;
    if (used > EXPAND_ROW_BUDGET) {
      throw new ProblemError('expand_budget_exceeded', `Expanding 'customFields' would embed field records worth ${used} rows (one per started KiB), more than ${EXPAND_ROW_BUDGET}`, { relation: 'customFields', budget: EXPAND_ROW_BUDGET });
    }
    const out = new Map<string, unknown[]>();
    for (const r of recs) {
      out.set(r.id, entriesOf(r).filter((e) => byId.has(e.customFieldId)).map((e) => ({ customFieldId: e.customFieldId, value: e.value, customField: byId.get(e.customFieldId) })));
    }
    return out;
  },
};
