/**
 * The declaration types of a resource: what `defineResource` takes (ResourceSpec
 * with its filters, expands, relations, policy and hooks) and what it gives
 * (Resource, everything the engine derives from the declaration).
 */
import type { FieldDef, ValueOf } from './fields';
import type { WriteContext, ReadContext } from './hooks';
import type { ColumnInfo, FilterOp, Rec } from '../sql/shape';

export type { ColumnInfo, FilterOp, Rec } from '../sql/shape';

export interface FilterDef {
  ops: readonly FilterOp[];
  /** The field it filters (defaults to the filter name). */
  field?: string;
  /** Filter through a many-to-many relation: rows linked to the given ids. */
  relation?: string;
  /** Filter through links of this kind (this row the parent) that operations write, not a declared relation: rows linked to the given ids. */
  links?: string;
  /**
   * A filter whose meaning depends on the caller (`eq` only): the value
   * becomes an `eq` on the stored field `field` with the value `value`
   * gives for the caller's member id (a chat's `recipientMemberId`).
   */
  derive?: { field: string; value: (given: string, memberId: string) => string };
  /**
   * The rows this filter selects (with `eq` or `in`) lie outside any project
   * (a chat's messages), so a list restricted by it takes no bound on the
   * projects the caller may open; their own rules decide who sees them.
   */
  outsideProjects?: true;
}

export type ExpandDef =
  /** This row holds the target's id in `field`. */
  | { kind: 'one'; target: string; field: string }
  /** The targets linked through a many-to-many relation. */
  | { kind: 'many'; target: string; relation: string }
  /** The target rows whose `field` holds this row's id. */
  | { kind: 'children'; target: string; field: string }
  /**
   * Entries computed by `load` (a chat's members with their flags): each
   * record's id → its entries, already in response form. A leaf: nothing
   * expands through it.
   */
  | {
    kind: 'entries'; target?: undefined;
    /** The resource whose records the entries show (their read scope is needed, as for any expand); none: the row's own facts. */
    reads?: string;
    load(ctx: ReadContext, recs: readonly Rec[]): Promise<Map<string, unknown[]>>;
  };

export interface RelationDef {
  /** The target resource of the ids. */
  target: string;
  /** The body field that replaces the set (if any). */
  field?: string;
  /** Most ids one request may add or remove. */
  max: number;
  /** False: the route exists in the spec but the target resource does not exist here yet → 501. */
  supported: boolean;
  /** The code for ids not found in the workspace (default m2m_target_not_found). */
  notFoundCode?: 'milestone_hiddenfor_roles_not_in_team';
  /** Extra checks on ids being linked (they already exist in the workspace). */
  validate?: (ctx: WriteContext, parent: Rec, ids: string[]) => Promise<void>;
}

type Action = 'read' | 'write' | 'delete';

/**
 * Who may do what with a resource (spec "Authentication" rules 4-5): what the
 * built-in roles hold beyond the defaults, and extra role permissions the
 * standard operations need. Owner and manager hold every action.
 */
export interface ResourcePolicy {
  /** Actions the built-in regular role holds (default read and write). */
  regular?: readonly Action[];
  /** Actions the built-in client (guest) role holds (default none). */
  client?: readonly Action[];
  /** Role permissions a standard action needs besides its scope (`{ write: ['manageWebhooks'] }`). */
  requires?: Partial<Record<Action, readonly string[]>>;
}

/**
 * Lifecycle hooks of a resource. `R` is the resource's record type, inferred
 * from its fields (`RecordOf`), so a hook reads `current.order` as a number.
 */
export interface ResourceHooks<R extends Rec = Rec> {
  /** Fill defaults and check rules on create; `input` is validated and mutable. */
  beforeCreate?(ctx: WriteContext, input: Partial<R>): Promise<void> | void;
  /** After the row and its relations are written, in the same transaction. */
  afterCreate?(ctx: WriteContext, rec: R): Promise<void> | void;
  /**
   * First thing in a create or update (before the row, or any row it
   * references, is locked): take the locks that must come first, those of
   * rows a body names whose concurrent removal locks them before the rows
   * it cleans (a custom field, whose deletion then locks the tasks, lists
   * and projects holding its values). `body` is the body as sent, not yet validated.
   */
  lockFirst?(ctx: WriteContext, body: unknown): Promise<void> | void;
  /** Check rules on update; `patch` holds only the sent fields and is mutable. */
  beforeUpdate?(ctx: WriteContext, current: R, patch: Partial<R>): Promise<void> | void;
  afterUpdate?(ctx: WriteContext, before: R, after: R): Promise<void> | void;
  /** Refuse a delete, or clean up dependants before it. */
  beforeDelete?(ctx: WriteContext, rec: R): Promise<void> | void;
  /** Before a trashed row comes back. */
  beforeRestore?(ctx: WriteContext, rec: R): Promise<void> | void;
  /** Before a sub-route adds ids to or removes ids from a row's relation (refuse the change; body sets go through beforeUpdate). */
  beforeLinksChange?(ctx: WriteContext, rec: R, relation: string): Promise<void> | void;
  /** After ids were linked to or unlinked from a row through a relation (body sets and sub-routes alike). */
  afterLinksChange?(ctx: WriteContext, rec: R, relation: string, added: readonly string[], removed: readonly string[]): Promise<void> | void;
  /** Hard removal (delete of a hard-deleted resource, or purge): remove dependants. */
  beforeDestroy?(ctx: WriteContext, rec: R): Promise<void> | void;
  /**
   * Adjust a record's response form (computed values the row does not store);
   * applied wherever records are serialised: reads, expands, write responses and event payloads.
   */
  present?(ctx: ReadContext, rec: R, out: Record<string, unknown>): void;
  /**
   * Fields the create answer alone carries (a once-only secret): never read
   * back, never in an event, and not in an Idempotency-Key replay (whose
   * stored answer therefore never holds them).
   */
  reveal?(ctx: WriteContext, rec: R): Record<string, unknown> | undefined;
  /** The record as its events carry it, from its response form (bound what could pass the 1 MiB webhook payload cap). */
  forEvent?(shown: Record<string, unknown>): Record<string, unknown>;
  /** Extra response fields that only a single GET carries. */
  decorateGet?(ctx: ReadContext, rec: R, out: Record<string, unknown>, select?: Set<string>): Promise<void> | void;
}

/** The fields every record holds (spec "Conventions"), in engine form; soft-deleted resources add `purgeAt` and `deletedById`. */
export type CommonRecord = {
  id: string;
  createdAt: number;
  updatedAt: number;
  createdByActorId: string | null;
  updatedByActorId: string | null;
  createdByActorType: string | null;
  updatedByActorType: string | null;
  purgeAt?: number | null;
  deletedById?: string | null;
};

/** The record of a resource with fields `F`, as hooks see it (timestamps in ms, relation sets as id arrays). */
export type RecordOf<F> = CommonRecord & { -readonly [K in keyof F]: ValueOf<F[K]> };

/** A relation as declared: `max` defaults to 150 (spec "Limits"), `supported` to true, `field` to the body field of `f.refs` naming it. */
export type RelationSpec = Omit<RelationDef, 'max' | 'supported'> & Partial<Pick<RelationDef, 'max' | 'supported'>>;

type Operation = 'list' | 'get' | 'create' | 'update' | 'delete';

export interface ResourceSpec<F extends Record<string, FieldDef<any>> = Record<string, FieldDef>> {
  /** camelCase singular: the event name (`task`, `checklistItem`). */
  name: string;
  /** kebab-case plural: the path segment and scope resource (`tasks`). */
  path: string;
  /** Table name (default: the path in snake_case). */
  table?: string;
  /** Soft-deleted (trash, restore, purge after 30 days); default false. */
  softDelete?: boolean;
  /** Supported standard operations (default: all five). */
  operations?: Partial<Record<Operation, boolean>>;
  fields: F;
  /** List filters; every `f.ref` field also gets `eq|in` unless it declares its own or `filter: false`. */
  filters: Record<string, FilterDef>;
  /** Sortable fields beyond the filterable scalar ones. */
  sortable?: string[];
  defaultSort: string;
  /** Default sort when the list is not restricted by `projectId`. */
  defaultSortWithoutProject?: string;
  /** Bare list parameters besides filters (`projectId`, `scope`). */
  listParams?: Record<string, { values?: readonly string[]; field?: string }>;
  /** Create needs a project (`project_not_specified`); the field also decides project access to its rows. */
  projectField?: string;
  /** The resource is the project itself: project access is judged on its own id. */
  projectContainer?: boolean;
  /**
   * The project is derived, not sent: `projectField` is set on create from the
   * row this reference field (set once, `createOnly`) points at, and follows it
   * when that row moves to another project (a checklist follows its task).
   */
  projectFrom?: string;
  /** Role policy; defaults described on {@link ResourcePolicy}. */
  policy?: ResourcePolicy;
  /**
   * Expand targets beyond the derived ones. Derived: `createdByActor` and
   * `updatedByActor` for every resource, `deletedBy` for soft-deleted ones, a
   * one-expand per `f.ref` field without a declared expand (`listId` →
   * `list`), and a many-expand per relation field (`assignees`).
   */
  expand?: Record<string, ExpandDef>;
  /** Relations beyond the derived ones (every `f.refs(…, { target })` field declares its own). */
  relations?: Record<string, RelationSpec>;
  /** Sub-route path segments (kebab) of relations, when they differ from the relation name. */
  relationPaths?: Record<string, string>;
  hooks?: ResourceHooks<RecordOf<F>>;
  /** Ids of this resource are UUIDs (actors), not `^[0-9A-Za-z_!]+$` ids. */
  uuidIds?: boolean;
  /** Older path spellings still served, with Deprecation and Link (spec rule 13). */
  retiredPaths?: string[];
  /** Read-only response fields computed by hooks, not stored (`defaultStatusId`). */
  extraResponseFields?: string[];
  /** Rows whose predicate is true are hidden from lists unless the filter named is given (archived projects). */
  hiddenByDefault?: { filter: string; column: string; value: unknown };
  /**
   * Personal records: the field holding the owning member's id. A member
   * lists, reads and changes only their own rows (another's id is 404); every
   * member manages their own, so the token's scope is checked and no role
   * permission; the resource's scopes are no role permission either.
   */
  ownedBy?: string;
  /**
   * Rows of one member whose breadth follows a role permission (time
   * entries): `field` holds the member. A member lists, reads, expands and
   * changes only their own rows (another's id is 404) unless their role holds
   * `widenedBy`, which widens reads to the whole workspace. Unlike `ownedBy`,
   * the resource's permissions are role permissions as usual; the field is
   * not set by the engine.
   */
  ownerRead?: { field: string; widenedBy: string };
  /**
   * Rows whose `field` holds `value` are private to the member in `owner`
   * (a private document): everyone else lists, reads, expands and changes
   * them as if they did not exist (404), whatever their role.
   */
  privateTo?: { field: string; value: string | boolean; owner: string };
  /**
   * Rows only their members see (a chat): the members of a row are the ids
   * linked to it through links of kind `links` (parent the row, related the
   * member). With `field`, membership is judged on the row that field names
   * (a message: its chat) and rows where the field is null are not
   * restricted. Everyone else, whatever their role, lists, reads, expands and
   * changes such rows as if they did not exist (404).
   */
  membersOnly?: { links: string; field?: string };
  /**
   * Rows whose `field` holds `value` are never served by the standard
   * list, get, update, delete or restore operations (404), though they exist
   * for expands (a project's discussion chat). A reference in a body naming
   * one is refused as missing (404 resource_not_found with the field) unless
   * the field declares `reachesUnlisted` (a message's chatId).
   */
  unlisted?: { field: string; value: string };
  /** Column values every row holds: written on insert, required by every read (a table shared with other kinds of rows). */
  fixed?: Record<string, string>;
  /** Writes emit webhook events (default true); false keeps the resource out of the event catalog. */
  events?: boolean;
  /**
   * DELETE revokes instead of removing: it stamps this timestamp field once
   * (a second DELETE keeps the first instant) and the row stays readable.
   */
  revokeField?: string;
  /**
   * The resource carries `createdById` and `updatedById` (member ids of the
   * creating and the last writing member, server-set) instead of the four
   * actor fields (spec "Conventions": favorite folders); the derived expands
   * are `createdBy` and `updatedBy` (members) instead of the actors.
   */
  memberStamps?: boolean;
}

/** A resource with everything the engine derives from its declaration. */
export interface Resource extends Omit<ResourceSpec, 'table' | 'softDelete' | 'operations' | 'expand' | 'relations' | 'events' | 'hooks'> {
  hooks?: ResourceHooks;
  table: string;
  softDelete: boolean;
  /** Writes emit webhook events. */
  events: boolean;
  operations: Partial<Record<Operation, boolean>>;
  expand: Record<string, ExpandDef>;
  relations?: Record<string, RelationDef>;
  /** Fields stored in the resource's own table, in a fixed order. */
  columns: ColumnInfo[];
  columnOf: Record<string, string>;
  /** Field names by retired name. */
  retiredFieldNames: Record<string, string>;
  /** Relation name by sub-route path segment. */
  relationByPath: Record<string, string>;
  /** Fields allowed as sort keys. */
  sortFields: Set<string>;
  /** Response field names (for `fields[...]`). */
  responseFields: Set<string>;
  /** Relation-backed body fields. */
  relationFields: Record<string, string>;
  /** Could this string be an id of this resource? Anything else is answered like an unknown id, without storage access. */
  isId(id: string): boolean;
  /** The field holding the id of the project a row belongs to (`id` for the project itself); undefined: not project-scoped. */
  projectKey?: string;
  /** The project a row belongs to, for event envelopes (`projectId` where the resource has one). */
  projectIdOf(rec: Rec): string | null;
}
