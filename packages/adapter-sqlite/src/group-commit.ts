import type Database from 'better-sqlite3';
import { CompiledQuery, type Kysely } from 'kysely';
import { execute, runDirectly, type DirectRun } from '@pmapi/core/sql';

/** A member's savepoint statements, compiled once (each member of a group runs two). */
const SAVEPOINT = CompiledQuery.raw('savepoint pm_member');
const RELEASE = CompiledQuery.raw('release pm_member');
const ROLLBACK_TO = CompiledQuery.raw('rollback to pm_member');

/** At most this many transactions share one commit, so that no answer waits behind a long queue. */
const MAX_GROUP = 32;

type Member = { fn: (trx: Kysely<any>) => Promise<unknown>; resolve: (v: unknown) => void; reject: (err: unknown) => void };

/**
 * The store's `transaction`, with group commit. SQLite has one writer at a
 * time, and on this one connection the transactions queue anyway; those that
 * are waiting when one finishes run inside the same SQLite transaction, each
 * in a savepoint of its own, and commit together. Each is still all or
 * nothing: one that fails is rolled back to its savepoint and answers its
 * error at once, leaving the others be. None answers success before the
 * commit holding its writes has succeeded; if that commit fails (or SQLite
 * abandons the transaction, as after a full disk or a trigger's
 * RAISE(ROLLBACK)), every member of the group answers the error, and those
 * still queued start a group of their own.
 *
 * Why: requests that arrive together (http-node hands a turn's requests on
 * at once) write to the same pages — the tasks table's last leaf and its
 * indexes, the outbox — and a commit appends every page it changed to the
 * write-ahead log: one commit for a group appends each shared page once.
 * A transaction on its own runs exactly as before (no savepoint).
 */
export function groupCommit(db: Kysely<any>, raw: Database.Database, direct: DirectRun) {
  const queue: Member[] = [];
  let draining = false;

  async function runGroup(first: Member): Promise<void> {
    const done: Array<{ m: Member; value: unknown }> = [];
    try {
      await db.transaction().execute(async (trx) => {
        // The transaction holds the connection: its statements run on it at once (core statement-cache.ts `execute`),
        // until it ends.
        runDirectly(trx, direct);
        try {
          // The first runs as a transaction of its own would: its failure rolls back the whole, so far its alone.
          done.push({ m: first, value: await first.fn(trx) });
          for (let taken = 1; queue.length > 0 && taken < MAX_GROUP; taken++) {
            const m = queue.shift()!;
            try {
              await execute(trx, SAVEPOINT);
              const value = await m.fn(trx);
              await execute(trx, RELEASE);
              done.push({ m, value });
            } catch (err) {
              // Every member settles exactly once, whatever fails after this.
              m.reject(err);
              // SQLite abandoned the transaction: the group's writes are gone with it.
              if (!raw.inTransaction) throw err;
              await execute(trx, ROLLBACK_TO);
              await execute(trx, RELEASE);
            }
          }
        } finally {
          runDirectly(trx, undefined);
        }
      });
    } catch (err) {
      // The first's own error, a member's that ended the transaction, or the commit's.
      for (const { m } of done) m.reject(err);
      if (done.length === 0) first.reject(err);
      return;
    }
    for (const { m, value } of done) m.resolve(value);
  }

  async function drain(): Promise<void> {
    draining = true;
    try {
      while (queue.length > 0) await runGroup(queue.shift()!);
    } finally {
      draining = false;
    }
  }

  return <T>(fn: (trx: Kysely<any>) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!draining) void drain();
    });
}
