/**
 * The contexts the standard operations run in: a read context (who calls, the
 * repository, project access) and a write context bound to one transaction
 * (the memo of references looked up and locked, timestamps, the actor that
 * stamps the writes).
 */
import type { Kysely } from 'kysely';
import { notFound } from '../errors/problem';
import type { Rec } from '../resources/define-resource';
import { Repo } from '../sql/repo';
import { jsonRowMemo } from '../sql/json-memo';
import { ensureIdentityActor, ensureMemberActor, ensureServiceActor, SYSTEM_ACTOR_NAME, systemActorId } from '../sql/queries/actors';
import type { SqlStore } from '../sql/dialect';
import type { ActorType, PendingEvent, Principal, ReadContext, WriteContext } from './context';
import type { EngineConfig } from './config';
import { ProjectAccess } from './access';

/** The context of a read: who calls, the repository (on `db`: by default the store's `reads` where it has one), the registry, the clock, project access. */
export function readContext(store: SqlStore, config: EngineConfig, principal: Principal, db: Kysely<any> = store.reads ?? store.db): ReadContext {
  const { registry, clock, ids } = config;
  // Rows are remembered between requests only outside transactions (json-memo.ts): never on a transaction's handle.
  const memo = db === (store.reads ?? store.db) ? jsonRowMemo(store) : undefined;
  const ctx = { principal, teamId: principal.teamId, repo: new Repo(db, store.dialect, memo), registry, clock, ids, cursorSecret: config.cursorSecret, files: principal.mount ? config.files.under(principal.mount) : config.files, now: clock.now() } as Omit<ReadContext, 'access'> & { access: ProjectAccess };
  ctx.access = new ProjectAccess(ctx as ReadContext);
  return ctx as ReadContext;
}

/**
 * The context of one write transaction; `events` collects what `emit` records.
 * `serviceActor`: the writes are a service's (a job's cron or recurringTask
 * actor), not the principal's.
 */
export function writeContext(store: SqlStore, config: EngineConfig, principal: Principal, trx: Kysely<any>, events: PendingEvent[], serviceActor?: { id: string; type: ActorType }): WriteContext {
  const base = readContext(store, config, principal, trx);
  const dialect = store.dialect;
  let lastStamp = 0;
  // References checked in this request (existence and project); rows looked up once (again only to lock them).
  const seen = new Map<string, Rec>();
  const locked = new Set<string>();
  const ctx: WriteContext = {
    ...base,
    db: trx,
    emit: (e) => {
      events.push(e);
    },
    actor: async () => {
      if (serviceActor) return serviceActor;
      const identity = principal.identity;
      if (identity === 'agent' || identity === 'automation') {
        // An agent's or automation's credential (docs/not-shown.md "Agents and automations").
        principal.actorId ??= await ensureIdentityActor(trx, dialect, base.registry.get('actor').table, {
          teamId: principal.teamId, memberId: principal.memberId, type: identity, displayName: principal.memberName, now: base.now,
        });
        return { id: principal.actorId, type: identity as ActorType };
      }
      if (principal.actorId) return { id: principal.actorId, type: 'human' as ActorType };
      const actors = base.registry.get('actor');
      if (!principal.memberId) {
        // No member calls (the purge job, the admin API): the workspace's systemDefault actor stamps the change.
        const id = await ensureServiceActor(trx, dialect, actors.table, {
          id: systemActorId(principal.teamId), teamId: principal.teamId, type: 'systemDefault', displayName: SYSTEM_ACTOR_NAME, now: base.now,
        });
        return { id, type: 'systemDefault' as ActorType };
      }
      principal.actorId = await ensureMemberActor(trx, dialect, actors.table, {
        id: base.ids.uuid(), teamId: principal.teamId, memberId: principal.memberId, displayName: principal.memberName, now: base.now,
      });
      return { id: principal.actorId, type: 'human' as ActorType };
    },
    mustGet: async (r, id, field, opts) => {
      const res = typeof r === 'string' ? base.registry.get(r) : r;
      const memoKey = `${res.name}:${id}`;
      const lock = opts?.lock;
      const known = seen.get(memoKey);
      // SQLite serialises writers (no row locks): a record already read in this transaction is as good as locked.
      if (known && (!lock || locked.has(memoKey) || !dialect.capabilities.forUpdate)) return known;
      const rec = await base.repo.get(res, principal.teamId, id, lock ? { lock } : {});
      if (!rec) throw notFound(res.name, id, field);
      seen.set(memoKey, rec);
      if (lock) locked.add(memoKey);
      return rec;
    },
    remember: (r, rec) => {
      const res = typeof r === 'string' ? base.registry.get(r) : r;
      seen.set(`${res.name}:${rec.id as string}`, rec);
    },
    stamp: (previous) => {
      let t = base.now;
      if (previous !== undefined && t <= previous) t = previous + 1;
      if (t <= lastStamp) t = lastStamp + 1;
      lastStamp = t;
      return t;
    },
    touch: async (previous) => {
      const actor = await ctx.actor();
      // updatedById: stored only by resources declaring `memberStamps` (the others have no such column).
      return { updatedAt: ctx.stamp(previous), updatedByActorId: actor.id, updatedByActorType: actor.type, updatedById: principal.memberId || null };
    },
  };
  return ctx;
}
