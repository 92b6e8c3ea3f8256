import { z } from 'zod';
import type { StorageKind, WriteMode } from '../sql/shape';

export type { StorageKind, WriteMode } from '../sql/shape';

/** The engine-form value of each storage kind (timestamps in ms). */
export interface KindValue {
  text: string;
  number: number;
  integer: number;
  boolean: boolean;
  timestamp: number;
  json: unknown;
}

/**
 * A field of a declaration. `T` is the value a record holds for it in engine
 * form (a timestamp is ms), inferred from the builder, so hooks see typed
 * records (see `RecordOf`).
 */
export interface FieldDef<T = unknown> {
  /** Type-level only: the engine-form value (never set). */
  readonly __value?: T;
  kind: StorageKind;
  /** Validates a written value; absent for read-only fields. */
  schema?: z.ZodType;
  mode: WriteMode;
  nullable: boolean;
  /** Must be present on create. */
  required: boolean;
  /** Never serialised (secrets, internal columns). */
  writeOnly: boolean;
  /** Not stored in a column: the value is the set of ids of this many-to-many relation. */
  relation?: string;
  /** The resource this id points to; the engine checks it exists in the workspace. */
  ref?: string;
  /**
   * A reference to a row of whichever resource the field named here holds
   * (by resource name: a favorite's `targetType`); checked by the resource's
   * own hooks. With `onDelete: 'cascade'` the row goes when that row is
   * removed for good.
   */
  refTypeField?: string;
  /** `cascade`: when the referenced row is removed for good, this row goes with it (a checklist with its task). */
  onDelete?: 'cascade';
  /** false: a reference without the derived `eq|in` list filter (the spec lists none for it). */
  filter?: false;
  /**
   * The reference may name rows its target's routes never serve (the
   * target's `unlisted` rows: a message posted to a project's discussion
   * chat); the resource's own rules decide who may. Without it the engine
   * refuses such a row as missing (404 resource_not_found naming the field).
   */
  reachesUnlisted?: true;
  /**
   * The resource's own hooks lock the referenced row before every write that
   * sets the field commits (a task's create and move bump the project's task
   * counter, which locks the project row and fails on a row that is gone):
   * the reference check reads the row without its key-share lock. Under many
   * concurrent writes naming one row, that lock costs the database a shared
   * lock record (a MultiXact) per write.
   */
  lockedByWrite?: true;
  /** Column name; derived (snake_case) by defineResource when omitted. */
  column?: string;
  /** Older names accepted in create and update bodies (spec rule 13). */
  retiredNames?: string[];
  /** Not part of the response (internal bookkeeping). */
  internal?: boolean;
  /** A calendar date `YYYY-MM-DD` stored as text (`f.date`): list filters on it take only such dates (400 invalid_query_param). */
  calendarDate?: true;
  /** Most ids a relation-backed set may hold in one body (default 150, spec "Limits"); more is `bulk_too_large`. */
  maxItems?: number;
  /** The resource a relation-backed set points at (`f.refs('assignees', { target: 'member' })`): the relation is then derived. */
  refsTarget?: string;
}

type Opts = Partial<Pick<FieldDef, 'mode' | 'nullable' | 'required' | 'writeOnly' | 'column' | 'retiredNames' | 'internal'>>;

/** `T`, or `T | null` when the options say `nullable: true`. */
type Nullable<T, O> = O extends { nullable: true } ? T | null : T;

/** The record value type of a field. */
export type ValueOf<D> = D extends FieldDef<infer T> ? T : unknown;

function make<T>(kind: StorageKind, schema: z.ZodType | undefined, opts: Opts = {}, extra: Partial<Omit<FieldDef, '__value'>> = {}): FieldDef<T> {
  const mode = opts.mode ?? (schema ? 'rw' : 'readOnly');
  let s = schema;
  if (s && opts.nullable) s = s.nullable();
  return {
    kind,
    schema: mode === 'readOnly' ? undefined : s,
    mode,
    nullable: opts.nullable ?? false,
    required: opts.required ?? false,
    writeOnly: opts.writeOnly ?? false,
    ...(opts.column ? { column: opts.column } : {}),
    ...(opts.retiredNames ? { retiredNames: opts.retiredNames } : {}),
    ...(opts.internal ? { internal: true } : {}),
    ...extra,
  };
}

/** Spec "Limits": a bulk write or sub-resource batch holds at most 150 items. */
export const BATCH_MAX = 150;

const ID = z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64);
const HEX6 = /^#[0-9A-Fa-f]{6}$/;

/** Field builders used by resource declarations. */
export const f = {
  /** A string; `trim` trims before the length checks. */
  string<O extends Opts & { min?: number; max?: number; trim?: boolean }>(o: O = {} as O): FieldDef<Nullable<string, O>> {
    let s: z.ZodString = z.string();
    if (o.trim) s = s.trim();
    if (o.min !== undefined) s = s.min(o.min, `must be at least ${o.min} characters`);
    if (o.max !== undefined) s = s.max(o.max, `must be at most ${o.max} characters`);
    return make('text', s, o);
  },
  /** A calendar date `YYYY-MM-DD` (spec "Conventions": fields ending in Date), stored as text; its filters take only such dates. */
  date<O extends Opts>(o: O = {} as O): FieldDef<Nullable<string, O>> {
    return make('text', z.iso.date({ message: 'must be a calendar date YYYY-MM-DD' }), o, { calendarDate: true });
  },
  /** A string drawn from a closed set. */
  enum<const T extends readonly [string, ...string[]], O extends Opts>(values: T, o: O = {} as O): FieldDef<Nullable<T[number], O>> {
    return make('text', z.enum(values), o);
  },
  /** An http(s) URL. */
  url<O extends Opts & { max?: number }>(o: O = {} as O): FieldDef<Nullable<string, O>> {
    return make('text', z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(o.max ?? 2048), o);
  },
  /** `#RRGGBB`. */
  hexColor<O extends Opts>(o: O = {} as O): FieldDef<Nullable<string, O>> {
    return make('text', z.string().regex(HEX6, 'must be a 6-digit hex colour like #1a2b3c'), o);
  },
  number<O extends Opts & { min?: number; max?: number }>(o: O = {} as O): FieldDef<Nullable<number, O>> {
    let s = z.number().finite();
    if (o.min !== undefined) s = s.min(o.min);
    if (o.max !== undefined) s = s.max(o.max);
    return make('number', s, o);
  },
  integer<O extends Opts & { min?: number; max?: number }>(o: O = {} as O): FieldDef<Nullable<number, O>> {
    let s = z.number().int();
    if (o.min !== undefined) s = s.min(o.min);
    if (o.max !== undefined) s = s.max(o.max);
    return make('integer', s, o);
  },
  boolean<O extends Opts>(o: O = {} as O): FieldDef<Nullable<boolean, O>> {
    return make('boolean', z.boolean(), o);
  },
  /** An instant: ISO 8601 with an offset, stored as milliseconds, served as UTC with milliseconds. */
  timestamp<O extends Opts>(o: O = {} as O): FieldDef<Nullable<number, O>> {
    return make('timestamp', z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }), o);
  },
  /** An id of another resource in the same workspace. */
  ref<O extends Opts & { onDelete?: 'cascade'; filter?: false; reachesUnlisted?: true; lockedByWrite?: true }>(target: string, o: O = {} as O): FieldDef<Nullable<string, O>> {
    return make('text', ID, o, {
      ref: target, ...(o.onDelete ? { onDelete: o.onDelete } : {}), ...(o.filter === false ? { filter: false as const } : {}),
      ...(o.reachesUnlisted ? { reachesUnlisted: true as const } : {}), ...(o.lockedByWrite ? { lockedByWrite: true as const } : {}),
    });
  },
  /** An id of a row of the resource named by the field `typeField` (a polymorphic reference; see {@link FieldDef.refTypeField}). */
  refAny<O extends Opts & { onDelete?: 'cascade' }>(typeField: string, o: O = {} as O): FieldDef<Nullable<string, O>> {
    return make('text', ID, o, { refTypeField: typeField, ...(o.onDelete ? { onDelete: o.onDelete } : {}) });
  },
  /** A set of ids backed by a many-to-many relation; in bodies it replaces the whole set. */
  refs(relation: string, o: Opts & { max?: number; target?: string } = {}): FieldDef<string[]> {
    const max = o.max ?? BATCH_MAX;
    return make('json', z.array(ID).max(max, `must hold at most ${max} ids`), o, { relation, maxItems: max, ...(o.target ? { refsTarget: o.target } : {}) });
  },
  /** A text value validated by the given schema. */
  text<S extends z.ZodType, O extends Opts>(schema: S, o: O = {} as O): FieldDef<Nullable<z.output<S>, O>> {
    return make('text', schema, o);
  },
  /** A JSON value validated by the given schema. */
  json<S extends z.ZodType, O extends Opts>(schema: S, o: O = {} as O): FieldDef<Nullable<z.output<S>, O>> {
    return make('json', schema, o);
  },
  /** A server-assigned value of the given kind. */
  readOnly<K extends StorageKind, O extends Omit<Opts, 'mode'>>(kind: K, o: O = {} as O): FieldDef<Nullable<KindValue[K], O>> {
    return make(kind, undefined, { ...o, mode: 'readOnly' });
  },
};

/** Longest custom field value (docs/not-shown.md "Custom fields"). */
export const CUSTOM_FIELD_VALUE_MAX = 2000;

/**
 * The `{customFieldId, value}` entries lists, projects and tasks carry; at
 * most 50 per request (spec "Limits"); each value a string ("" clears). What
 * the entries name and hold is checked against the custom fields
 * (resources/custom-values.ts).
 */
export const customFieldsSchema = z
  .array(z.strictObject({ customFieldId: ID, value: z.string().max(CUSTOM_FIELD_VALUE_MAX, `must be at most ${CUSTOM_FIELD_VALUE_MAX} characters`) }))
  .max(50, 'at most 50 customFields entries per request');

export const stringArray = (max = 200) => z.array(z.string().max(200)).max(max);

export function snakeCase(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
