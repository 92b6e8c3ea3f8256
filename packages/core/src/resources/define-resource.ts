import { BATCH_MAX, snakeCase, f, type FieldDef, type StorageKind } from './fields';
import { isId, isUuid } from '../ids/index';
import type { ColumnInfo, ExpandDef, FilterDef, FilterOp, RelationDef, Resource, ResourceSpec } from './resource-spec';

/** The declaration types live in resource-spec.ts; they are importable from here too. */
export type {
  ColumnInfo, FilterOp, Rec, FilterDef, ExpandDef, RelationDef, ResourcePolicy, ResourceHooks, CommonRecord, RecordOf, RelationSpec, ResourceSpec, Resource,
} from './resource-spec';

export const RANGE: FilterOp[] = ['gt', 'gte', 'lt', 'lte'];

/** The common read-only fields every resource carries (spec "Conventions"). */
export const commonFields = {
  id: f.readOnly('text'),
  createdAt: f.readOnly('timestamp'),
  updatedAt: f.readOnly('timestamp'),
  createdByActorId: f.readOnly('text', { nullable: true }),
  updatedByActorId: f.readOnly('text', { nullable: true }),
  createdByActorType: f.readOnly('text', { nullable: true }),
  updatedByActorType: f.readOnly('text', { nullable: true }),
} satisfies Record<string, FieldDef>;

/** The common fields of a resource declaring `memberStamps`: member ids instead of the actor fields. */
export const memberStampFields = {
  id: f.readOnly('text'),
  createdAt: f.readOnly('timestamp'),
  updatedAt: f.readOnly('timestamp'),
  createdById: f.readOnly('text', { nullable: true }),
  updatedById: f.readOnly('text', { nullable: true }),
} satisfies Record<string, FieldDef>;

export const softDeleteFields = {
  purgeAt: f.readOnly('timestamp', { nullable: true }),
  deletedById: f.readOnly('text', { nullable: true }),
} satisfies Record<string, FieldDef>;

const SORTABLE_KINDS = new Set<StorageKind>(['text', 'number', 'integer', 'boolean', 'timestamp']);

/**
 * Declare a resource. Everything the engine does for it — validation, columns,
 * filters, sorts, expands, relations, events — derives from this one object.
 */
export function defineResource<const F extends Record<string, FieldDef<any>>>(spec: ResourceSpec<F>): Resource {
  const softDelete = spec.softDelete ?? false;
  const fields: Record<string, FieldDef> = {
    ...(spec.memberStamps ? memberStampFields : commonFields),
    ...(softDelete ? softDeleteFields : {}),
    ...spec.fields,
  };
  for (const [what, key] of [['ownedBy', spec.ownedBy], ['ownerRead.field', spec.ownerRead?.field], ['privateTo.field', spec.privateTo?.field], ['privateTo.owner', spec.privateTo?.owner], ['membersOnly.field', spec.membersOnly?.field], ['unlisted.field', spec.unlisted?.field], ['revokeField', spec.revokeField], ['projectField', spec.projectField], ['projectFrom', spec.projectFrom]] as const) {
    if (key !== undefined && !(key in fields)) throw new Error(`pmapi: ${spec.name}.${what} names no field '${key}'`);
  }
  if (spec.projectFrom && (!spec.projectField || !fields[spec.projectFrom]!.ref || fields[spec.projectFrom]!.mode !== 'createOnly')) {
    throw new Error(`pmapi: ${spec.name}.projectFrom needs a projectField and a createOnly reference field`);
  }
  const relations = deriveRelations(spec, fields);
  const filters = deriveFilters(spec, fields);
  const expand = deriveExpands(spec, fields, softDelete, relations);
  const columns: ColumnInfo[] = [];
  const columnOf: Record<string, string> = {};
  const retired: Record<string, string> = {};
  const relationFields: Record<string, string> = {};
  const responseFields = new Set<string>();
  for (const [key, def] of Object.entries(fields)) {
    if (def.retiredNames) for (const r of def.retiredNames) retired[r] = key;
    if (!def.writeOnly && !def.internal) responseFields.add(key);
    if (def.relation) {
      relationFields[key] = def.relation;
      continue;
    }
    const column = def.column ?? snakeCase(key);
    columnOf[key] = column;
    columns.push({ key, column, kind: def.kind, internal: !!def.internal, writeOnly: def.writeOnly });
  }
  const sortFields = new Set<string>(['createdAt', 'updatedAt', ...(spec.sortable ?? [])]);
  for (const [name, fd] of Object.entries(filters)) {
    const field = fd.field ?? name;
    const def = fields[field];
    if (!fd.relation && !fd.links && def && !def.relation && SORTABLE_KINDS.has(def.kind)) sortFields.add(field);
  }
  for (const s of [spec.defaultSort, spec.defaultSortWithoutProject]) if (s) sortFields.add(s.replace(/^-/, ''));
  const relationByPath: Record<string, string> = {};
  for (const name of Object.keys(relations)) {
    relationByPath[spec.relationPaths?.[name] ?? kebab(name)] = name;
  }
  for (const extra of spec.extraResponseFields ?? []) responseFields.add(extra);
  const projectKey = spec.projectContainer ? 'id' : spec.projectField;
  // Lookup tables keyed by client input have no prototype: `constructor` or `__proto__` is just an unknown name.
  const { relations: _declaredRelations, expand: _declaredExpand, ...rest } = spec;
  return {
    ...rest,
    table: spec.table ?? spec.path.replace(/-/g, '_'),
    softDelete,
    events: spec.events ?? true,
    operations: spec.operations ?? { list: true, get: true, create: true, update: true, delete: true },
    fields: dict(fields),
    filters: dict(filters),
    expand: dict(expand),
    ...(spec.listParams ? { listParams: dict(spec.listParams) } : {}),
    ...(Object.keys(relations).length ? { relations: dict(relations) } : {}),
    columns,
    columnOf: dict(columnOf),
    retiredFieldNames: dict(retired),
    relationByPath: dict(relationByPath),
    sortFields,
    responseFields,
    relationFields: dict(relationFields),
    isId: spec.uuidIds ? isUuid : isId,
    ...(projectKey ? { projectKey } : {}),
    projectIdOf: (rec) => {
      const v = rec[projectKey ?? 'projectId'];
      return typeof v === 'string' ? v : null;
    },
  };
}

/** The declared filters, plus `eq|in` on every reference field that declares none (and does not opt out with `filter: false`). */
function deriveFilters(spec: ResourceSpec, fields: Record<string, FieldDef>): Record<string, FilterDef> {
  const out: Record<string, FilterDef> = { ...spec.filters };
  const filtered = new Set(Object.entries(spec.filters).map(([name, fd]) => fd.field ?? name));
  for (const [key, def] of Object.entries(fields)) {
    if (def.ref && !def.relation && def.filter !== false && !filtered.has(key) && !(key in out)) out[key] = { ops: ['eq', 'in'] };
  }
  return out;
}

/** Relations of `f.refs(…, { target })` fields, plus the declared ones with their defaults filled in. */
function deriveRelations(spec: ResourceSpec, fields: Record<string, FieldDef>): Record<string, RelationDef> {
  const out: Record<string, RelationDef> = {};
  for (const [key, def] of Object.entries(fields)) {
    if (def.relation && def.refsTarget) out[def.relation] = { target: def.refsTarget, field: key, max: def.maxItems ?? BATCH_MAX, supported: true };
  }
  for (const [name, r] of Object.entries(spec.relations ?? {})) {
    const field = r.field ?? Object.entries(fields).find(([, d]) => d.relation === name)?.[0];
    out[name] = { ...out[name], ...r, max: r.max ?? out[name]?.max ?? BATCH_MAX, supported: r.supported ?? true, ...(field ? { field } : {}) };
  }
  return out;
}

/** The declared expands plus those the fields imply (actors, deletedBy, references, relation sets). */
function deriveExpands(spec: ResourceSpec, fields: Record<string, FieldDef>, softDelete: boolean, relations: Record<string, RelationDef>): Record<string, ExpandDef> {
  const declared = spec.expand ?? {};
  const out: Record<string, ExpandDef> = {};
  const usesField = (field: string) => Object.values(declared).some((e) => e.kind === 'one' && e.field === field);
  const usesRelation = (relation: string) => Object.values(declared).some((e) => e.kind === 'many' && e.relation === relation);
  const add = (name: string, e: ExpandDef) => {
    if (!(name in declared) && !(name in fields && !fields[name]!.relation)) out[name] = e;
  };
  if (spec.memberStamps) {
    add('createdBy', { kind: 'one', target: 'member', field: 'createdById' });
    add('updatedBy', { kind: 'one', target: 'member', field: 'updatedById' });
  } else {
    add('createdByActor', { kind: 'one', target: 'actor', field: 'createdByActorId' });
    add('updatedByActor', { kind: 'one', target: 'actor', field: 'updatedByActorId' });
  }
  if (softDelete) add('deletedBy', { kind: 'one', target: 'member', field: 'deletedById' });
  for (const [key, def] of Object.entries(fields)) {
    if (def.ref && !def.relation && key.endsWith('Id') && !usesField(key)) add(key.slice(0, -2), { kind: 'one', target: def.ref, field: key });
  }
  for (const [name, rel] of Object.entries(relations)) {
    if (rel.supported && rel.field && !usesRelation(name)) add(rel.field, { kind: 'many', target: rel.target, relation: name });
  }
  return { ...out, ...declared };
}

function dict<T>(o: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, o);
}

export function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
