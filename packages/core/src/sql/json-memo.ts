import type { Rec, StoredResource as Resource } from './shape';

/** One row as a hop of an expanded page reads it: what access checks read, its database-built JSON, and that JSON's UTF-8 bytes once a page has needed them. */
export interface JsonRowRead {
  readonly rec: Rec;
  readonly json: string;
  bytes?: Uint8Array;
}

type Entry = { stamp: number; row: JsonRowRead };

/**
 * Rows read by `Repo.getManyJson` (an expanded page's hops: a page's
 * project, statuses, assignees) remembered between requests, each under the
 * store's change stamp (`SqlStore.changeStamp`) for its table and `links`
 * (the tables its JSON is built from) as it was read just before the
 * statement: a remembered row is answered only while that stamp has not
 * moved, i.e. while no write by this process and no commit by another can
 * have changed it, so it is always what the statement would read now. A
 * write between the stamp's read and the statement makes the entry look
 * older than it is, never newer.
 *
 * Only rows read outside a transaction are remembered and answered (a
 * transaction's reads may see its own uncommitted writes): `readContext`
 * hands the memo only to a repository on the store's own handle. What depends
 * on the caller (access, the row budget) is judged on every request from the
 * remembered `rec`. Rows found are kept, at most `max` (oldest first out);
 * ids with no row cost a statement each time and hold no memory.
 */
export class JsonRowMemo {
  private readonly rows = new Map<string, Entry>();
  private readonly stamps = new Map<string, () => number>();
  constructor(
    private readonly changeStamp: (tables: readonly string[]) => () => number,
    private readonly max = 4096,
  ) {}

  /** The change stamp of the tables a row of `res` is built from, now. */
  stamp(res: Resource): number {
    let s = this.stamps.get(res.table);
    if (!s) this.stamps.set(res.table, (s = this.changeStamp([res.table, 'links'])));
    return s();
  }

  /** The row remembered under `key` if it was read under `stamp`. */
  get(key: string, stamp: number): JsonRowRead | undefined {
    const hit = this.rows.get(key);
    return hit && hit.stamp === stamp ? hit.row : undefined;
  }

  /** Remember a row read under `stamp` (the stamp read before its statement). */
  set(key: string, stamp: number, row: JsonRowRead): void {
    this.rows.delete(key);
    if (this.rows.size >= this.max) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, { stamp, row });
  }
}

/** Each store's memo (null: the store has no change stamp, nothing is remembered). */
const memos = new WeakMap<object, JsonRowMemo | null>();

/** The memo of a store's rows, one per store (every pmapi on it shares what the database holds). */
export function jsonRowMemo(store: { changeStamp?: (tables: readonly string[]) => () => number }): JsonRowMemo | undefined {
  let m = memos.get(store);
  if (m === undefined) memos.set(store, (m = store.changeStamp ? new JsonRowMemo(store.changeStamp.bind(store)) : null));
  return m ?? undefined;
}
