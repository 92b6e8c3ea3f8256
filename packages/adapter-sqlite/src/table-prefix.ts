import {
  AliasNode,
  IdentifierNode,
  JoinNode,
  ListNode,
  OperationNodeTransformer,
  RawNode,
  SqliteIntrospector,
  TableNode,
  UsingNode,
  type CreateIndexNode,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type ReferencesNode,
  type RootOperationNode,
  type SchemableIdentifierNode,
  type SchemaMetadata,
  type TableMetadata,
  type UnknownRow,
} from 'kysely';

/** A table prefix: a letter or `_`, then up to 30 letters, digits or `_` (so every prefixed name is a plain identifier). */
export const TABLE_PREFIX_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,30}$/;

/**
 * Check an `openSqliteStore({ tablePrefix })` (or `sqliteRateLimitStore`) option;
 * returns the prefix, '' when none was given. Names starting `sqlite_` are
 * SQLite's own (it refuses to create them), so such a prefix is refused too.
 */
export function checkTablePrefix(value: unknown, option = 'tablePrefix'): string {
  if (value === undefined) return '';
  if (typeof value !== 'string' || !TABLE_PREFIX_PATTERN.test(value) || /^sqlite_/i.test(value)) {
    const shown = typeof value === 'string' ? `'${value}'` : typeof value;
    throw new Error(`pmapi: openSqliteStore ${option} must match ${TABLE_PREFIX_PATTERN} and not start with 'sqlite_' (got ${shown})`);
  }
  return value;
}

/**
 * The one mapping between the names pmapi's code uses (`tasks`, `links`,
 * `pmapi_migrations`, `rate_counters`, index names, …) and the names stored in
 * the file (`pm_tasks`, …). Every statement pmapi runs, its migrations (tables,
 * indexes) and the rate-limit side file take their names from here.
 */
export interface TableNames {
  readonly prefix: string;
  /** The stored name of a table or index pmapi calls `name`. */
  stored(name: string): string;
  /** The name pmapi calls a stored table, or undefined when the table is not pmapi's (no prefix). */
  logical(stored: string): string | undefined;
}

/** SQLite's own objects (`sqlite_master`, `sqlite_sequence`, …): never renamed. */
const isSqliteOwn = (name: string) => /^sqlite_/i.test(name);

export function tableNames(prefix: string): TableNames {
  const lower = prefix.toLowerCase();
  return {
    prefix,
    stored: (name) => (prefix === '' || isSqliteOwn(name) ? name : `${prefix}${name}`),
    // SQLite compares identifiers without regard to ASCII case.
    logical: (stored) => (prefix === '' ? stored : stored.toLowerCase().startsWith(lower) ? stored.slice(prefix.length) : undefined),
  };
}

// Statement kinds that open a scope of table names (as kysely's WithSchemaTransformer tracks them), plus raw SQL.
const ROOTS = new Set<string>([
  'AlterTableNode', 'CreateIndexNode', 'CreateSchemaNode', 'CreateTableNode', 'CreateTypeNode', 'CreateViewNode',
  'RefreshMaterializedViewNode', 'DeleteQueryNode', 'DropIndexNode', 'DropSchemaNode', 'DropTableNode', 'DropTypeNode',
  'DropViewNode', 'InsertQueryNode', 'RawNode', 'SelectQueryNode', 'UpdateQueryNode', 'MergeQueryNode',
] satisfies Array<RootOperationNode['kind']>);

/**
 * Renames pmapi's tables and indexes in every statement: a table named where
 * a statement reads or writes (from, join, into, update, using, `sql.table`
 * in raw SQL, create/drop/alter), and every column reference qualified by
 * such a table (`tasks.id`), takes its stored name. Aliases (`links as l`,
 * then `l.kind`), CTE names, `excluded` and SQLite's own tables keep theirs.
 * Index names (create index) are prefixed too: they share the file's one
 * namespace with the host's.
 *
 * kysely runs plugins on a query builder each time it becomes a node,
 * so a subquery built on its own (`shown.unionAll(end)`) is transformed once
 * alone and again inside the whole statement. Each name this transformer
 * gives is remembered with the name it replaced: a second pass leaves it
 * (never `pm_pm_tasks`), and gives the old name back where the whole
 * statement shows it was a CTE's (`with w as (…) … select … from w`), which
 * the subquery alone could not know.
 */
class TablePrefixTransformer extends OperationNodeTransformer {
  /** Table names of the statements being transformed (outer ones included: correlated references). */
  readonly #tables = new Set<string>();
  readonly #ctes = new Set<string>();
  /** Identifiers this transformer made, and the names they replaced. */
  readonly #given = new WeakMap<IdentifierNode, string>();

  constructor(private readonly names: TableNames) {
    super();
  }

  protected override transformNodeImpl<T extends OperationNode>(node: T, queryId?: QueryId): T {
    if (!ROOTS.has(node.kind)) return super.transformNodeImpl(node, queryId);
    const ctes = this.#collectCtes(node);
    const tables = this.#collectTables(node);
    for (const c of ctes) this.#ctes.add(c);
    for (const t of tables) this.#tables.add(t);
    try {
      return super.transformNodeImpl(node, queryId);
    } finally {
      for (const t of tables) this.#tables.delete(t);
      for (const c of ctes) this.#ctes.delete(c);
    }
  }

  /** The stored name's identifier, remembered as given here. */
  #give(name: string): IdentifierNode {
    const id = IdentifierNode.create(this.names.stored(name));
    this.#given.set(id, name);
    return id;
  }

  /** A name as the statement knew it before this transformer (if it gave it). */
  #original(id: IdentifierNode): string {
    return this.#given.get(id) ?? id.name;
  }

  protected override transformSchemableIdentifier(node: SchemableIdentifierNode, queryId?: QueryId): SchemableIdentifierNode {
    const was = this.#given.get(node.identifier);
    if (was !== undefined) return this.#ctes.has(was) ? { ...node, identifier: IdentifierNode.create(was) } : node;
    const t = super.transformSchemableIdentifier(node, queryId);
    const name = t.identifier.name;
    if (t.schema || !this.#tables.has(name)) return t;
    return { ...t, identifier: this.#give(name) };
  }

  protected override transformCreateIndex(node: CreateIndexNode, queryId?: QueryId): CreateIndexNode {
    const t = super.transformCreateIndex(node, queryId);
    return { ...t, name: this.#given.has(node.name) ? node.name : this.#give(node.name.name) };
  }

  /** `references other(id)`: always one of pmapi's tables. */
  protected override transformReferences(node: ReferencesNode, queryId?: QueryId): ReferencesNode {
    const t = super.transformReferences(node, queryId);
    const id = node.table.table.identifier;
    if (t.table.table.schema || this.#given.has(id)) return { ...t, table: node.table };
    return { ...t, table: { ...t.table, table: { ...t.table.table, identifier: this.#give(id.name) } } };
  }

  #collectCtes(node: OperationNode): Set<string> {
    const out = new Set<string>();
    const w = (node as { with?: { expressions: ReadonlyArray<{ name: { table: TableNode } }> } }).with;
    for (const e of w?.expressions ?? []) {
      const name = e.name.table.table.identifier.name;
      if (!this.#ctes.has(name)) out.add(name);
    }
    return out;
  }

  #collectTables(node: OperationNode): Set<string> {
    const out = new Set<string>();
    const n = node as Record<string, any>;
    const add = (id: SchemableIdentifierNode) => {
      const name = this.#original(id.identifier);
      if (!id.schema && !isSqliteOwn(name) && !this.#tables.has(name) && !this.#ctes.has(name)) out.add(name);
    };
    const fromExpr = (e: OperationNode | undefined): void => {
      if (!e) return;
      if (TableNode.is(e)) add(e.table);
      else if (AliasNode.is(e) && TableNode.is(e.node)) add(e.node.table);
      else if (ListNode.is(e)) e.items.forEach(fromExpr);
      else if (UsingNode.is(e)) e.tables.forEach(fromExpr);
      else if (JoinNode.is(e)) fromExpr(e.table);
    };
    if (n.name?.kind === 'SchemableIdentifierNode') add(n.name);
    for (const f of n.from?.froms ?? []) fromExpr(f);
    fromExpr(n.into);
    fromExpr(n.table);
    fromExpr(n.renameTo);
    for (const j of n.joins ?? []) fromExpr(j.table);
    fromExpr(n.using);
    // Raw SQL: tables it names with sql.table(…) (`from ${sql.table('links')} as l`), which is a raw node wrapping the table.
    const rawTables = (raw: RawNode): void => {
      for (const p of raw.parameters) {
        if (RawNode.is(p) && p.sqlFragments.every((f) => f === '')) rawTables(p);
        else fromExpr(p);
      }
    };
    if (RawNode.is(node)) rawTables(node);
    return out;
  }
}

/** The kysely plugin that gives every statement pmapi runs on a prefixed store its stored table names. */
export class TablePrefixPlugin implements KyselyPlugin {
  readonly #transformer: TablePrefixTransformer;

  constructor(readonly names: TableNames) {
    this.#transformer = new TablePrefixTransformer(names);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#transformer.transformNode(args.node, args.queryId);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/**
 * Introspection seen through the prefix: pmapi's tables under the names its
 * code uses, the host's tables not at all. kysely's Migrator looks for its
 * bookkeeping tables this way, and code that walks `store.db.introspection`
 * then reads tables by the names it was given.
 */
export class PrefixedSqliteIntrospector implements DatabaseIntrospector {
  readonly #inner: SqliteIntrospector;

  constructor(db: Kysely<any>, private readonly names: TableNames) {
    this.#inner = new SqliteIntrospector(db);
  }

  getSchemas(): Promise<SchemaMetadata[]> {
    return this.#inner.getSchemas();
  }

  async getTables(options?: DatabaseMetadataOptions): Promise<TableMetadata[]> {
    const out: TableMetadata[] = [];
    for (const t of await this.#inner.getTables(options)) {
      const name = this.names.logical(t.name);
      if (name !== undefined) out.push({ ...t, name });
    }
    return out;
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
