import { sql, type Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';
import type { StorageKind, StoredResource } from '../shape';

export type Kind = StorageKind | 'id' | 'bigint';
/** `name: kind` with `?` for nullable, e.g. `'due_at?': 'timestamp'`. */
export type Cols = Record<string, Kind>;

export const common: Cols = {
  id: 'id',
  team_id: 'id',
  created_at: 'timestamp',
  updated_at: 'timestamp',
  'created_by_actor_id?': 'id',
  'updated_by_actor_id?': 'id',
  'created_by_actor_type?': 'text',
  'updated_by_actor_type?': 'text',
};
export const soft: Cols = { 'purge_at?': 'timestamp', 'deleted_by_id?': 'id' };
const ACTOR_COLUMNS = ['created_by_actor_id?', 'updated_by_actor_id?', 'created_by_actor_type?', 'updated_by_actor_type?'];

export function createTable(db: Kysely<any>, d: DialectSupport, name: string, cols: Cols, pk: string[] = ['id']) {
  let t = db.schema.createTable(name);
  for (const [raw, kind] of Object.entries(cols)) {
    const nullable = raw.endsWith('?');
    const col = nullable ? raw.slice(0, -1) : raw;
    t = t.addColumn(col, sql.raw(d.ddl[kind]), (c) => (nullable ? c : c.notNull()));
  }
  return t.addPrimaryKeyConstraint(`${name}_pk`, pk as any);
}

/**
 * The columns of a resource's table, from its declaration: the common
 * columns, the soft-delete ones when declared, and one column per stored
 * field (ids for references). A column is NOT NULL when its field is neither
 * nullable nor optional (required, or server-assigned). `extra` adds
 * bookkeeping columns the declaration does not show (counters).
 *
 * @example await createTable(db, d, res.table, tableOf(res)).execute();
 */
export function tableOf(res: StoredResource, extra: Cols = {}): Cols {
  const cols: Cols = { ...common, ...(res.softDelete ? soft : {}) };
  // Member stamps replace the actor columns (their created_by_id and updated_by_id come from the fields below).
  if (res.memberStamps) for (const c of ACTOR_COLUMNS) delete cols[c];
  // The kind column of a table shared with other kinds of rows.
  for (const column of Object.keys(res.fixed ?? {})) cols[column] = 'text';
  const known = new Set(Object.keys(cols).map((c) => c.replace(/\?$/, '')));
  for (const c of res.columns) {
    if (known.has(c.column)) continue;
    const def = res.fields[c.key]!;
    const notNull = !def.nullable && (def.required || def.mode === 'readOnly');
    cols[`${c.column}${notNull ? '' : '?'}`] = def.ref ? 'id' : c.kind;
  }
  return { ...cols, ...extra };
}
