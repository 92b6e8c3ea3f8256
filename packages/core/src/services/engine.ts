import type { Kysely } from 'kysely';
import { clip, notFound, ProblemError, validationError } from '../errors/problem';
import { iso } from '../clock/index';
import type { Rec, Resource } from '../resources/define-resource';
import { Repo } from '../sql/repo';
import { insertOutbox } from '../sql/queries/outbox';
import { rewriteAudience, storedAudience } from '../sql/queries/activity';
import { ensureIdentityActor, ensureMemberActor, ensureServiceActor, SYSTEM_ACTOR_NAME, systemActorId } from '../sql/queries/actors';
import { rowsDueForPurge } from '../sql/queries/purge';
import type { LiveWebhook } from '../sql/queries/webhooks';
import type { SqlStore } from '../sql/dialect';
import { nextCursor as nextPageCursor } from '../query/page';
import { takePage, type Outcome } from '../presenters/v3';
import type { ParsedList, ReadPlan } from '../query/parse';
import type { FieldCondition } from '../sql/plan';
import type { ExpandNode } from '../query/plan';
import { prepareBody } from './body';
import { OversizedArray } from '../http/body';
import { assertUnchangedSince, audienceOf, destroyDependants, eventPayload, followProject, newRecord } from './records';
import { materialize, toResponse, assertExpandReadable, jsonShape, jsonPagePlan, EXPAND_ROW_BUDGET } from './serialize';
import type { ActorType, PendingEvent, Principal, ReadContext, WriteContext } from './context';
import type { EngineConfig } from './config';
import { ProjectAccess, accessFields } from './access';
import { enqueueWebhookJobs } from '../webhooks/enqueue';

export const SOFT_DELETE_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
export { BATCH_MAX } from '../resources/fields';

export type { OpResult } from '../presenters/v3';

/** The standard operations of spec "Standard operations", for any declared resource. */
export class Engine {
  constructor(
    readonly store: SqlStore,
    readonly config: EngineConfig,
  ) {}

  readContext(principal: Principal, db: Kysely<any> = this.store.db): ReadContext {
    const { registry, clock, ids } = this.config;
    const ctx = { principal, teamId: principal.teamId, repo: new Repo(db, this.store.dialect), registry, clock, ids, cursorSecret: this.config.cursorSecret, files: this.config.files, now: clock.now() } as Omit<ReadContext, 'access'> & { access: ProjectAccess };
    ctx.access = new ProjectAccess(ctx as ReadContext);
    return ctx as ReadContext;
  }

  /** A write context bound to a transaction; `events` collects what `emit` records. */
  /**
   * The context of one write transaction. `serviceActor`: the writes are a
   * service's (a job's cron or recurringTask actor), not the principal's.
   */
  writeContext(principal: Principal, trx: Kysely<any>, events: PendingEvent[], serviceActor?: { id: string; type: ActorType }): WriteContext {
    const base = this.readContext(principal, trx);
    const dialect = this.store.dialect;
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

  /** Serialise records for a response (relation ids, expand, fields). */
  async present(ctx: ReadContext, res: Resource, recs: Rec[], expand: ExpandNode, fields: Map<string, Set<string>>) {
    return materialize(ctx, res, recs, { expand, fields, budget: { used: 0, max: EXPAND_ROW_BUDGET } });
  }

  private noExpand: ExpandNode = { children: new Map() };

  async payloadOf(ctx: ReadContext, res: Resource, rec: Rec): Promise<Record<string, unknown>> {
    const [obj] = await this.present(ctx, res, [rec], this.noExpand, new Map());
    return obj!;
  }

  // --- reads ----------------------------------------------------------------

  /** The list operation over a plan parsed at the edge (`parseListQuery`). */
  async list(ctx: ReadContext, res: Resource, parsed: ParsedList): Promise<Outcome> {
    const { plan } = parsed;
    assertExpandReadable(ctx, res, plan.expand);
    // Only projects the caller may open (and rows of them).
    if (parsed.outsideProjects) {
      // Rows outside projects (a chat's messages): their own rules (membersOnly) decide.
    } else if (res.projectContainer || (res.projectField && parsed.projectId === undefined)) {
      const ids = await ctx.access.accessibleIds();
      if (ids !== 'all') {
        const column = res.columnOf[res.projectKey!]!;
        // Rows outside any project (a chat's messages) are judged by their other rules, not left out.
        const outside = !res.projectContainer && res.fields[res.projectKey!]!.nullable;
        const open: FieldCondition = { column, kind: 'text', op: 'in', value: ids };
        const none: FieldCondition = { column, kind: 'text', op: 'null', value: true };
        if (outside) plan.conditions.push(ids.length ? { any: [none, open] } : none);
        else if (ids.length === 0) parsed.none = true;
        else plan.conditions.push(open);
      }
    } else if (res.projectField && parsed.projectId !== undefined) {
      await ctx.access.assertProject(parsed.projectId);
    }
    if (parsed.none) {
      return { kind: 'page', page: { data: [], ...(plan.includeTotal ? { total: 0 } : {}), limit: plan.limit, hasMore: false, nextCursor: null } };
    }
    const cursorAfter = (sort: unknown, id: string) => nextPageCursor({ endpoint: res.path },
      { teamId: ctx.teamId, now: ctx.now, cursorSecret: this.config.cursorSecret, binding: parsed.filterKey }, parsed.sortKey, sort ?? null, id);
    const total = async () => (plan.includeTotal ? { total: await ctx.repo.count(plan, ctx.teamId) } : {});
    // The fast path: the database builds each row's JSON (same bytes as below).
    const fastPlan = jsonPagePlan(ctx.registry, res, plan.expand, plan.fields);
    const fast = fastPlan && (await ctx.repo.listJson(plan, ctx.teamId, plan.limit + 1, fastPlan.columns, fastPlan.extras));
    if (fastPlan && fast) {
      const { rows: page, hasMore } = takePage(fast, plan.limit);
      const json = await fastPlan.print(ctx, page);
      const last = page[page.length - 1];
      const nextCursor = hasMore && last ? cursorAfter(last.sort, last.id) : null;
      return { kind: 'page', page: { data: [], json, ...(await total()), limit: plan.limit, hasMore, nextCursor } };
    }
    const { rows: page, hasMore } = takePage(await ctx.repo.list(plan, ctx.teamId, plan.limit + 1, { links: true }), plan.limit);
    const data = await this.present(ctx, res, page, plan.expand, plan.fields);
    const last = page[page.length - 1];
    const nextCursor = hasMore && last ? cursorAfter(last[plan.sort.field], last.id) : null;
    return { kind: 'page', page: { data, ...(await total()), limit: plan.limit, hasMore, nextCursor } };
  }

  async get(ctx: ReadContext, res: Resource, id: string, view: ReadPlan): Promise<Outcome> {
    const { expand, fields } = view;
    assertExpandReadable(ctx, res, expand);
    // The fast path: the database builds the record's JSON (same bytes as below); only what access reads is decoded.
    const shape = res.hooks?.decorateGet || res.unlisted ? undefined : jsonShape(res, expand, fields);
    const fast = shape && (await ctx.repo.getJson(res, ctx.teamId, id, shape, accessFields(res)));
    if (fast === undefined && shape) throw notFound(res.name, id);
    if (fast) {
      await ctx.access.assertRecord(res, fast.rec);
      return { kind: 'record', record: {}, json: fast.json };
    }
    const rec = await ctx.repo.get(res, ctx.teamId, id, { links: true });
    if (!rec || unlisted(res, rec)) throw notFound(res.name, id);
    await ctx.access.assertRecord(res, rec);
    const [obj] = await this.present(ctx, res, [rec], expand, fields);
    if (res.hooks?.decorateGet) await res.hooks.decorateGet(ctx, rec, obj!, fields.get(res.path));
    return { kind: 'record', record: obj! };
  }

  /** The record as the request's view shows it (the event payload when nothing is expanded or selected). */
  private async shown(ctx: ReadContext, res: Resource, rec: Rec, view: ReadPlan, payload?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { expand, fields } = view;
    assertExpandReadable(ctx, res, expand);
    if (payload && expand.children.size === 0 && fields.size === 0) return payload;
    const [obj] = await this.present(ctx, res, [rec], expand, fields);
    return obj!;
  }

  // --- writes ---------------------------------------------------------------

  /** A lifecycle event (`audience`: who may see the record, computed from it unless given). */
  private async event(ctx: WriteContext, res: Resource, action: string, rec: Rec, payload: Record<string, unknown>, audience?: readonly string[]) {
    if (!res.events) return;
    const who = audience ?? (await audienceOf(ctx, res, rec));
    ctx.emit({
      type: `${res.name}.${action}`,
      aggregateType: res.name,
      aggregateId: rec.id,
      projectId: res.projectIdOf(rec),
      payload: { [res.name]: eventPayload(res, payload) },
      ...(who ? { audience: who } : {}),
    });
  }

  private async membershipEvents(ctx: WriteContext, res: Resource, rec: Rec, relation: string, ids: string[], change: 'added' | 'removed') {
    await membershipEvents(ctx, res, rec, relation, ids, change);
  }

  /**
   * Check every id of a relation set exists in the workspace: else 404
   * m2m_target_not_found with `missing`. Ids in `linked` (the set as it is)
   * may name rows no longer live (a trashed project): keeping or unlinking
   * such a link is allowed. The targets are key-share locked (sql/repo.ts
   * RowLock): one deleted meanwhile waits, then drops the new link.
   */
  private async checkTargets(ctx: WriteContext, res: Resource, relation: string, parent: Rec | undefined, ids: string[], field?: string, linked?: () => Promise<ReadonlySet<string>>) {
    const rel = res.relations![relation]!;
    if (!rel.supported) {
      if (ids.length === 0) return [];
      throw new ProblemError('m2m_not_supported', `${res.path} does not support '${relation}' yet`, { relation });
    }
    if (ids.length === 0) return [];
    const target = ctx.registry.get(rel.target);
    // Rows the target's routes never serve (`unlisted`) count as missing.
    const found = (await ctx.repo.getMany(target, ctx.teamId, ids, undefined, { lock: 'share' })).filter((f) => !unlisted(target, f));
    const have = new Set(found.map((f) => f.id));
    let absent = ids.filter((i) => !have.has(i));
    if (absent.length && linked) {
      const already = await linked();
      absent = absent.filter((i) => !already.has(i));
    }
    if (absent.length) {
      const missing = absent.map((i) => clip(i, 100));
      if (rel.notFoundCode) throw new ProblemError(rel.notFoundCode, `${relation} holds ids that are not in this workspace`, { missing, relation });
      throw new ProblemError('m2m_target_not_found', `${missing.length} id(s) of '${relation}' do not exist in this workspace`, {
        missing, relation, ...(field ? { field } : {}),
      });
    }
    for (const f of found) await ctx.access.assertRecord(target, f);
    if (rel.validate && parent) await rel.validate(ctx, parent, ids);
    return found;
  }

  /** The ids a row's relation set holds now (live targets or not). */
  private async linkedIds(ctx: WriteContext, res: Resource, relation: string, id: string): Promise<ReadonlySet<string>> {
    return new Set((await ctx.repo.linksOf(`${res.name}.${relation}`, [id])).get(id) ?? []);
  }

  private async checkRefs(ctx: WriteContext, res: Resource, values: Record<string, unknown>) {
    for (const [key, v] of Object.entries(values)) {
      const def = res.fields[key];
      if (def?.ref && typeof v === 'string') {
        const target = ctx.registry.get(def.ref);
        // A reference into a project the caller cannot open is refused like a direct access.
        // Key-share locked: a concurrent delete of the target waits, then sees (and cascades or clears) this reference.
        const rec = await ctx.mustGet(target, v, key, { lock: 'share' });
        // A row its routes never serve (`unlisted`) is missing to a reference too, unless the field declares `reachesUnlisted`.
        if (unlisted(target, rec) && !def.reachesUnlisted) throw notFound(target.name, v, key);
        await ctx.access.assertRecord(target, rec);
      }
    }
  }

  async create(ctx: WriteContext, res: Resource, body: unknown, view: ReadPlan): Promise<Outcome> {
    await res.hooks?.lockFirst?.(ctx, body);
    const { values, relations } = prepareBody(res, body, 'create');
    // A personal record belongs to its creator.
    if (res.ownedBy) values[res.ownedBy] = ctx.principal.memberId;
    // A derived project is the referenced row's (a checklist's is its task's).
    if (res.projectFrom && typeof values[res.projectFrom] === 'string') {
      const parent = ctx.registry.get(res.fields[res.projectFrom]!.ref!);
      // Key-share locked: a concurrent delete of the parent waits, then sees this row among its dependants.
      values[res.projectField!] = parent.projectIdOf(await ctx.mustGet(parent, values[res.projectFrom] as string, res.projectFrom, { lock: 'share' }));
    }
    // Access first: a closed project's statuses and lists must not shape the answer.
    if (res.projectField && typeof values[res.projectField] === 'string') await ctx.access.assertProject(values[res.projectField] as string);
    await this.checkRefs(ctx, res, values);
    for (const [relation, ids] of Object.entries(relations)) await this.checkTargets(ctx, res, relation, undefined, ids, fieldOfRelation(res, relation));
    await res.hooks?.beforeCreate?.(ctx, values);
    if (res.projectField && typeof values[res.projectField] === 'string') await ctx.access.assertProject(values[res.projectField] as string);
    const rec = await newRecord(ctx, res, values);
    const now = rec.createdAt;
    await ctx.repo.insert(res, ctx.teamId, rec);
    for (const [relation, ids] of Object.entries(relations)) {
      const rel = res.relations![relation]!;
      if (rel.validate) await rel.validate(ctx, rec, ids);
      const added = await ctx.repo.addLinks(`${res.name}.${relation}`, ctx.teamId, rec.id, ids, now);
      await this.membershipEvents(ctx, res, rec, relation, added, 'added');
      await res.hooks?.afterLinksChange?.(ctx, rec, relation, added, []);
    }
    let stored: Rec;
    let payload: Record<string, unknown>;
    const writes = ctx.repo.writes;
    if (res.hooks?.afterCreate) await res.hooks.afterCreate(ctx, rec);
    if (ctx.repo.writes !== writes) {
      // The hook wrote something (perhaps this row): read it back.
      stored = (await ctx.repo.get(res, ctx.teamId, rec.id))!;
      payload = await this.payloadOf(ctx, res, stored);
    } else {
      // Nothing else touched the row: answer from what was written (links as linksOf orders them).
      stored = rec;
      const links = new Map<string, Map<string, string[]>>();
      for (const [relation, ids] of Object.entries(relations)) links.set(`${res.name}.${relation}`, new Map([[rec.id, [...ids].sort()]]));
      payload = toResponse(res, rec, links);
      res.hooks?.present?.(ctx, rec, payload);
    }
    await this.event(ctx, res, 'created', stored, payload);
    const revealed = res.hooks?.reveal?.(ctx, stored);
    return { kind: 'record', record: await this.shown(ctx, res, stored, view, payload), created: true, ...(revealed ? { revealed } : {}) };
  }

  async update(ctx: WriteContext, res: Resource, id: string, body: unknown, view: ReadPlan): Promise<Outcome> {
    await res.hooks?.lockFirst?.(ctx, body);
    const current = await ctx.repo.get(res, ctx.teamId, id, { lock: true });
    if (!current || unlisted(res, current)) throw notFound(res.name, id);
    await ctx.access.assertRecord(res, current);
    const { values: patch, relations, expectedUpdatedAt } = prepareBody(res, body, 'update');
    assertUnchangedSince(res, current, expectedUpdatedAt);
    for (const [key, v] of Object.entries(patch)) {
      const def = res.fields[key]!;
      if (def.mode === 'createOnly') {
        if (JSON.stringify(v) !== JSON.stringify(current[key])) {
          throw new ProblemError('validation_failed', `${key} cannot change after creation`, {
            errors: [{ field: key, code: 'immutable', message: `${key} is set once at creation` }],
          });
        }
        delete patch[key];
      }
    }
    if (res.projectField && typeof patch[res.projectField] === 'string' && patch[res.projectField] !== current[res.projectField]) {
      await ctx.access.assertProject(patch[res.projectField] as string);
    }
    await this.checkRefs(ctx, res, patch);
    for (const [relation, ids] of Object.entries(relations)) await this.checkTargets(ctx, res, relation, current, ids, fieldOfRelation(res, relation), () => this.linkedIds(ctx, res, relation, id));
    await res.hooks?.beforeUpdate?.(ctx, current, patch);
    if (res.projectField && typeof patch[res.projectField] === 'string' && patch[res.projectField] !== current[res.projectField]) {
      await ctx.access.assertProject(patch[res.projectField] as string);
    }
    const stamp = await ctx.touch(current.updatedAt);
    const now = stamp.updatedAt;
    const values = { ...patch, ...stamp };
    const written = await ctx.repo.updateReturning(res, ctx.teamId, id, values, current.updatedAt);
    if (!written) throw new ProblemError('stale_write', `${res.name} ${id} changed while this update ran`);
    const writes = ctx.repo.writes;
    const after = { ...current, ...values } as Rec;
    for (const [relation, ids] of Object.entries(relations)) {
      const kind = `${res.name}.${relation}`;
      const existing = (await ctx.repo.linksOf(kind, [id])).get(id) ?? [];
      const want = new Set(ids);
      // A body set replaces what the caller can see: links to records hidden from them (a task of a project they
      // cannot open) stay, as they were never shown to the caller (docs/not-shown.md "Replacing a set").
      const dropped = await this.visibleAmong(ctx, res.relations![relation]!.target, existing.filter((x) => !want.has(x)));
      const removed = await ctx.repo.removeLinks(kind, id, dropped);
      const added = await ctx.repo.addLinks(kind, ctx.teamId, id, ids, now);
      await this.membershipEvents(ctx, res, after, relation, removed, 'removed');
      await this.membershipEvents(ctx, res, after, relation, added, 'added');
      await res.hooks?.afterLinksChange?.(ctx, after, relation, added, removed);
    }
    await res.hooks?.afterUpdate?.(ctx, current, after);
    await followProject(ctx, res, current, after);
    const p = res.privateTo;
    if (p && (current[p.field] === p.value) !== (after[p.field] === p.value)) {
      // A record turned private (or shared again): its past events take its audience now (docs/not-shown.md "Activity feed").
      await rewriteAudience(ctx.repo, ctx.teamId, res.name, id, storedAudience(res, after, await audienceOf(ctx, res, after)));
    }
    // The row as the update stored it, unless anything was written since (links, hooks, dependants): then read it again.
    const stored = ctx.repo.writes === writes ? written : (await ctx.repo.get(res, ctx.teamId, id, { links: true }))!;
    const payload = await this.payloadOf(ctx, res, stored);
    await this.event(ctx, res, 'updated', stored, payload);
    return { kind: 'record', record: await this.shown(ctx, res, stored, view, payload) };
  }

  async remove(ctx: WriteContext, res: Resource, id: string): Promise<Outcome> {
    // A row removed for good is `delete` locked (sql/repo.ts RowLock): a write referencing it (key-share lock) finishes first, and its row is then among the dependants.
    const current = await ctx.repo.get(res, ctx.teamId, id, { lock: res.softDelete || res.revokeField ? true : 'delete' });
    if (!current || unlisted(res, current)) throw notFound(res.name, id);
    await ctx.access.assertRecord(res, current);
    if (res.revokeField) {
      // Revoking twice keeps the first instant.
      if (current[res.revokeField] === null) {
        await res.hooks?.beforeDelete?.(ctx, current);
        const revoked = { [res.revokeField]: ctx.now, ...(await ctx.touch(current.updatedAt)) };
        await ctx.repo.update(res, ctx.teamId, id, revoked);
        const after = { ...current, ...revoked };
        if (res.events) await this.event(ctx, res, 'updated', after, await this.payloadOf(ctx, res, after));
      }
      return { kind: 'done' };
    }
    await res.hooks?.beforeDelete?.(ctx, current);
    // The payload is the resource as it now is (spec Events, "Body envelope"): a trashed row with purgeAt and deletedById set; a destroyed one as it was last.
    let payload: Record<string, unknown>;
    let removed = current;
    if (res.softDelete) {
      const trashed = { purgeAt: ctx.now + SOFT_DELETE_RETENTION_MS, deletedById: ctx.principal.memberId, ...(await ctx.touch(current.updatedAt)) };
      await ctx.repo.update(res, ctx.teamId, id, trashed);
      // The row as now stored, without reading it back.
      removed = { ...current, ...trashed };
      payload = await this.payloadOf(ctx, res, removed);
    } else {
      payload = await this.payloadOf(ctx, res, current);
      // Who may see it is read before its links go.
      const audience = await audienceOf(ctx, res, current);
      await this.destroy(ctx, res, current);
      await this.event(ctx, res, 'removed', removed, payload, audience ?? undefined);
      return { kind: 'done' };
    }
    await this.event(ctx, res, 'removed', removed, payload);
    return { kind: 'done' };
  }

  /**
   * Of these ids of `target` records, the ones the caller may see: live
   * records they may open, and ids of no live record (nothing hides those).
   */
  private async visibleAmong(ctx: WriteContext, target: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return ids;
    const res = this.config.registry.get(target);
    const live = await ctx.repo.getMany(res, ctx.teamId, ids);
    const seen = new Set((await ctx.access.filterRecords(res, live)).map((r) => r.id));
    const exists = new Set(live.map((r) => r.id));
    return ids.filter((x) => seen.has(x) || !exists.has(x));
  }

  /** Remove a row for good, with its dependants and links. */
  async destroy(ctx: WriteContext, res: Resource, rec: Rec): Promise<void> {
    await res.hooks?.beforeDestroy?.(ctx, rec);
    await destroyDependants(ctx, res, [rec.id]);
    const own = Object.keys(res.relations ?? {}).map((r) => `${res.name}.${r}`);
    const pointing: string[] = [];
    for (const other of ctx.registry.all()) {
      for (const [rname, rel] of Object.entries(other.relations ?? {})) if (rel.target === res.name) pointing.push(`${other.name}.${rname}`);
    }
    await ctx.repo.dropLinks({ kinds: own, parentIds: [rec.id] });
    await ctx.repo.dropLinks({ kinds: pointing, relatedIds: [rec.id] });
    await ctx.repo.destroy(res, ctx.teamId, [rec.id]);
  }

  async restore(ctx: WriteContext, res: Resource, id: string, view: ReadPlan): Promise<Outcome> {
    const current = await ctx.repo.get(res, ctx.teamId, id, { includeTrashed: true, lock: true });
    if (!current || unlisted(res, current) || (current.purgeAt !== null && (current.purgeAt as number) <= ctx.now)) throw notFound(res.name, id);
    await ctx.access.assertRecord(res, current);
    if (current.purgeAt === null) return { kind: 'record', record: await this.shown(ctx, res, current, view) };
    await res.hooks?.beforeRestore?.(ctx, current);
    await ctx.repo.update(res, ctx.teamId, id, { purgeAt: null, deletedById: null, ...(await ctx.touch(current.updatedAt)) });
    const stored = (await ctx.repo.get(res, ctx.teamId, id, { links: true }))!;
    const payload = await this.payloadOf(ctx, res, stored);
    await this.event(ctx, res, 'restored', stored, payload);
    return { kind: 'record', record: await this.shown(ctx, res, stored, view, payload) };
  }

  /** POST / DELETE /{resource}/{id}/{relation} with `{ids}` (spec rule 12). */
  async relation(ctx: WriteContext, res: Resource, id: string, relationPath: string, change: 'add' | 'remove', body: unknown, view: ReadPlan): Promise<Outcome> {
    const relation = res.relationByPath[relationPath];
    if (!relation) {
      throw new ProblemError('m2m_relation_unknown', `${res.path} has no relation '${relationPath}'`, {
        relation: relationPath, available: Object.keys(res.relationByPath),
      });
    }
    const rel = res.relations![relation]!;
    if (!rel.supported) throw new ProblemError('m2m_not_supported', `${res.path} does not support '${relationPath}' yet`, { relation: relationPath });
    const ids = relationIds(body, rel.max);
    const current = await ctx.repo.get(res, ctx.teamId, id, { lock: true });
    if (!current || unlisted(res, current)) throw notFound(res.name, id);
    await ctx.access.assertRecord(res, current);
    await res.hooks?.beforeLinksChange?.(ctx, current, relation);
    const kind = `${res.name}.${relation}`;
    let changed: string[];
    if (change === 'add') {
      await this.checkTargets(ctx, res, relation, current, ids, undefined, () => this.linkedIds(ctx, res, relation, id));
      changed = await ctx.repo.addLinks(kind, ctx.teamId, id, ids, ctx.now);
    } else {
      // Unlinking needs only the link: a target no longer live (a trashed project) can still be unlinked.
      await this.checkTargets(ctx, res, relation, undefined, ids, undefined, () => this.linkedIds(ctx, res, relation, id));
      changed = await ctx.repo.removeLinks(kind, id, ids);
    }
    let rec = current;
    if (changed.length) {
      await ctx.repo.update(res, ctx.teamId, id, { ...(await ctx.touch(current.updatedAt)) });
      rec = (await ctx.repo.get(res, ctx.teamId, id, { links: true }))!;
      await this.membershipEvents(ctx, res, rec, relation, changed, change === 'add' ? 'added' : 'removed');
      await res.hooks?.afterLinksChange?.(ctx, rec, relation, change === 'add' ? changed : [], change === 'add' ? [] : changed);
    }
    return { kind: 'record', record: await this.shown(ctx, res, rec, view) };
  }

  /** Write collected events to the outbox in the same transaction (the delivery envelope of spec "Delivery request"). */
  async flushEvents(trx: Kysely<any>, principal: Principal, events: PendingEvent[], now: number): Promise<void> {
    if (events.length === 0) return;
    const d = this.store.dialect;
    const rows = events.map((e) => {
      const eventId = this.config.ids.uuid();
      const envelope = {
        eventId,
        type: e.type,
        aggregateType: e.aggregateType,
        aggregateId: e.aggregateId,
        teamId: principal.teamId,
        projectId: e.projectId,
        triggeredBy: principal.identity === 'agent'
          ? { source: 'agent', agentId: principal.memberId }
          : principal.memberId && principal.identity !== 'automation'
            ? { source: 'human', userId: principal.userId, teamMemberId: principal.memberId }
            : { source: 'system' },
        timestamp: iso(now),
        payload: e.payload,
      };
      return {
        id: eventId, team_id: principal.teamId, type: e.type, aggregate_type: e.aggregateType, aggregate_id: e.aggregateId,
        project_id: e.projectId, body: d.encode('json', envelope), created_at: d.encode('timestamp', now),
        // What the activity feed scopes by (routes/activity.ts): who may see the event, and who wrote it.
        audience: storedAudience(this.config.registry.byName.get(e.aggregateType), e.payload[e.aggregateType] as Record<string, unknown> | undefined, e.audience),
        member_id: principal.memberId || null,
      };
    });
    let hooks: LiveWebhook[] | undefined;
    for (let i = 0; i < rows.length; i += 100) {
      const batch = rows.slice(i, i + 100);
      const params = batch.flatMap((r) => Object.values(r));
      // The last batch also reads the team's live webhooks for the job queue, in the same statement (where the dialect can).
      const last = i + 100 >= rows.length;
      const found = await insertOutbox(trx, d, batch, params, last ? principal.teamId : undefined);
      if (found) hooks = found;
    }
    await enqueueWebhookJobs(trx, d, principal.teamId, rows.map((r, i) => ({ id: r.id, type: r.type, audience: events[i]!.audience })), now, hooks);
  }

  /** Destroy soft-deleted rows past retention; emits `{resource}.force_deleted`. Returns how many went. */
  async purge(system: Principal): Promise<number> {
    let total = 0;
    for (const res of this.config.registry.all()) {
      if (!res.softDelete) continue;
      for (;;) {
        const n = await this.store.transaction(async (trx) => {
          // One runner at a time across processes; another runner's batch is simply skipped here.
          if (this.store.dialect.tryLock && !(await this.store.dialect.tryLock(trx, `purge:${res.table}`))) return 0;
          const events: PendingEvent[] = [];
          const rows = await rowsDueForPurge(trx, this.store.dialect, res.table, this.config.clock.now(), 200);
          const repo = new Repo(trx, this.store.dialect);
          for (const row of rows) {
            const rec = repo.decode(res, row);
            const p = { ...system, teamId: row.team_id as string };
            const ctx = this.writeContext(p, trx, events);
            const payload = await this.payloadOf(ctx, res, rec);
            const audience = await audienceOf(ctx, res, rec);
            await this.destroy(ctx, res, rec);
            await this.event(ctx, res, 'force_deleted', rec, payload, audience);
            await this.flushEvents(trx, p, events.splice(0), ctx.now);
          }
          return rows.length;
        });
        total += n;
        if (n < 200) break;
      }
    }
    return total;
  }
}

/** A row the standard operations never serve (`unlisted`: a project's discussion chat). */
function unlisted(res: Resource, rec: Rec): boolean {
  return !!res.unlisted && rec[res.unlisted.field] === res.unlisted.value;
}

/**
 * The body of a sub-resource request, `{"ids": [...]}`, validated exactly
 * (spec rule 13: purpose-built operation bodies): no other key, a non-empty
 * array (`batch_empty`) of at most `max` ids (`batch_too_large`, measured
 * before any element is looked at), each an id string.
 */
function relationIds(body: unknown, max: number): string[] {
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    throw validationError([{ field: '', code: 'invalid_type', message: 'the body must be a JSON object {"ids": [...]}' }]);
  }
  const o = (body ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => k !== 'ids');
  if (unknown.length) {
    throw validationError(unknown.map((k) => ({ field: k, code: 'unrecognized_key', message: 'a sub-resource body holds only ids' })));
  }
  const raw = o.ids;
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) {
    throw new ProblemError('batch_empty', 'ids must be a non-empty array of ids');
  }
  if (raw instanceof OversizedArray || (Array.isArray(raw) && raw.length > max)) {
    throw new ProblemError('batch_too_large', `At most ${max} ids per request`, { max, received: raw.length });
  }
  if (!Array.isArray(raw) || raw.some((x) => typeof x !== 'string')) {
    throw validationError([{ field: 'ids', code: 'invalid_type', message: 'must be an array of id strings' }]);
  }
  return [...new Set(raw as string[])];
}



function fieldOfRelation(res: Resource, relation: string): string | undefined {
  for (const [field, rel] of Object.entries(res.relationFields)) if (rel === relation) return field;
  return undefined;
}

/**
 * The membership events of a relation change (`{resource}.{relation}.added` /
 * `.removed`, one per id, payload `{parentId, relatedId, relation}`), as the
 * standard operations emit them; for hooks and operations that change a set
 * themselves (a handoff's task assignees, a project operation's roster).
 */
export async function membershipEvents(ctx: WriteContext, res: Resource, rec: Rec, relation: string, ids: readonly string[], change: 'added' | 'removed'): Promise<void> {
  if (!res.events || ids.length === 0) return;
  const who = await audienceOf(ctx, res, rec);
  for (const relatedId of ids) {
    ctx.emit({
      type: `${res.name}.${relation}.${change}`,
      aggregateType: res.name,
      aggregateId: rec.id,
      projectId: res.projectIdOf(rec),
      payload: { parentId: rec.id, relatedId, relation },
      ...(who ? { audience: who } : {}),
    });
  }
}
