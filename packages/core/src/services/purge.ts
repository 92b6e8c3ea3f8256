/** The purge job: soft-deleted rows past retention are destroyed for good. */
import type { Rec, Resource } from '../resources/define-resource';
import { Repo } from '../sql/repo';
import { rowsDueForPurge } from '../sql/queries/purge';
import type { SqlStore } from '../sql/dialect';
import { audienceOf } from './records';
import type { PendingEvent, Principal, ReadContext, WriteContext } from './context';
import type { EngineConfig } from './config';
import { writeContext } from './write-context';
import { flushEvents, lifecycleEvent } from './events';

/** What the purge takes of the engine: a record's event payload, and the removal of a row for good (the Engine). */
export interface PurgeOps {
  payloadOf(ctx: ReadContext, res: Resource, rec: Rec): Promise<Record<string, unknown>>;
  destroy(ctx: WriteContext, res: Resource, rec: Rec): Promise<void>;
}

/** Destroy soft-deleted rows past retention; emits `{resource}.force_deleted`. Returns how many went. */
export async function purge(store: SqlStore, config: EngineConfig, system: Principal, ops: PurgeOps): Promise<number> {
  let total = 0;
  for (const res of config.registry.all()) {
    if (!res.softDelete) continue;
    for (;;) {
      const n = await store.transaction(async (trx) => {
        // One runner at a time across processes; another runner's batch is simply skipped here.
        if (store.dialect.tryLock && !(await store.dialect.tryLock(trx, `purge:${res.table}`))) return 0;
        const events: PendingEvent[] = [];
        const rows = await rowsDueForPurge(trx, store.dialect, res.table, config.clock.now(), 200);
        const repo = new Repo(trx, store.dialect);
        for (const row of rows) {
          const rec = repo.decode(res, row);
          const p = { ...system, teamId: row.team_id as string };
          const ctx = writeContext(store, config, p, trx, events);
          const payload = await ops.payloadOf(ctx, res, rec);
          const audience = await audienceOf(ctx, res, rec);
          await ops.destroy(ctx, res, rec);
          await lifecycleEvent(ctx, res, 'force_deleted', rec, payload, audience);
          await flushEvents(store, config, trx, p, events.splice(0), ctx.now);
        }
        return rows.length;
      });
      total += n;
      if (n < 200) break;
    }
  }
  return total;
}
