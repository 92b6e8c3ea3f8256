import type { FilterOp, StorageKind, StoredResource } from './shape';

/** One validated condition on a column (or through links). Values are JS values (timestamps in ms). */
export interface FieldCondition {
  column: string;
  kind: StorageKind;
  /** A filter operator, or `ne` (conditions the engine adds itself, never a client's filter). */
  op: FilterOp | 'ne';
  value: unknown;
  /** Through a many-to-many relation: `links.kind`. */
  linkKind?: string;
}

/** A condition of a list plan: one on a field, or one that holds when any of its parts holds. */
export type Condition = FieldCondition | { any: readonly Condition[] };

export interface SortPlan {
  field: string;
  column: string;
  desc: boolean;
  nullable: boolean;
  kind: StorageKind;
}

/** The keyset boundary a cursor carries: the last row's sort value and id. */
export interface Boundary {
  value: unknown;
  id: string;
}

export interface ExpandNode {
  /** relation name → nested node */
  children: Map<string, ExpandNode>;
}

/** A frozen, validated list query. Storage never sees raw query strings. */
export interface ListPlan {
  resource: StoredResource;
  conditions: Condition[];
  /** Include trashed rows (a purgeAt filter was given). */
  includeTrashed: boolean;
  sort: SortPlan;
  after?: Boundary;
  limit: number;
  /** Rows skipped before the page, in SQL (the legacy v1.0 offset paging); absent or 0 for keyset pages. */
  offset?: number;
  includeTotal: boolean;
  expand: ExpandNode;
  fields: Map<string, Set<string>>;
}
