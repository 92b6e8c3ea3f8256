/**
 * What storage knows of a resource: its table, columns and their kinds. The
 * full declaration (resources/resource-spec.ts) extends this shape, so the
 * storage layer depends on nothing above it.
 */

/** How a value is stored; each adapter encodes these its own way. */
export type StorageKind = 'text' | 'number' | 'integer' | 'boolean' | 'timestamp' | 'json';

/**
 * When a field may be written:
 * - `rw`: create and update;
 * - `createOnly`: create; afterwards immutable (a PATCH with another value is refused);
 * - `updateOnly`: only by PATCH (ignored in create bodies, like server-assigned fields);
 * - `readOnly`: server-assigned; ignored in create and update bodies.
 */
export type WriteMode = 'rw' | 'createOnly' | 'updateOnly' | 'readOnly';

/** Filter operators (spec "Standard operations" rule 7). */
export type FilterOp = 'eq' | 'in' | 'contains' | 'startsWith' | 'gt' | 'gte' | 'lt' | 'lte' | 'null' | 'notNull';

/** A stored row in engine form: camelCase keys, JS values (timestamps as ms); every resource's row has an id and its two stamps. */
export type Rec = Record<string, unknown> & { id: string; createdAt: number; updatedAt: number };

export interface ColumnInfo {
  key: string;
  column: string;
  kind: StorageKind;
  internal: boolean;
  writeOnly: boolean;
}

/** The part of a field storage reads. */
export interface StoredField {
  kind: StorageKind;
  mode: WriteMode;
  nullable: boolean;
  required: boolean;
  ref?: string;
}

/** The part of a resource storage reads. */
export interface StoredResource {
  readonly name: string;
  readonly table: string;
  readonly softDelete: boolean;
  readonly columns: ColumnInfo[];
  readonly columnOf: Record<string, string>;
  readonly fields: Record<string, StoredField>;
  /** Column values every row of the resource holds (a table shared with other kinds of rows). */
  readonly fixed?: Readonly<Record<string, string>>;
  /** Member ids (`created_by_id`, `updated_by_id`) stamp its rows instead of the actor columns. */
  readonly memberStamps?: boolean;
  /** Response field → many-to-many relation name (the relations a read may carry, see Repo `links`). */
  readonly relationFields: Readonly<Record<string, string>>;
  /** Could this string be an id of this resource? */
  isId(id: string): boolean;
}
