import type { Rec, Resource } from '../resources/define-resource';
import type { WriteContext } from './context';
import type { Repo } from '../sql/repo';
import type { IdGenerator } from '../ids/index';
import { presentRecord } from './serialize';
import { ProblemError } from '../errors/problem';
import { iso } from '../clock/index';
import { effectivePermissions } from '../auth/roles';
import { compileMapper, type Mapper } from '../codegen/mapper';

/**
 * Insert a row of any resource from a hook (a project's default status, …),
 * stamped like an API create and announced with its `created` event.
 */
export async function insertRecord(ctx: WriteContext, resName: string, values: Record<string, unknown>): Promise<Rec> {
  const res = ctx.registry.get(resName);
  const rec = await newRecord(ctx, res, values);
  await ctx.repo.insert(res, ctx.teamId, rec);
  await announce(ctx, res, rec, 'created');
  return rec;
}

/** A full row of `res`: the given values, `id`, the common stamps (`actor` null when the service writes it), every other column null. */
function rowOf(res: Resource, values: Record<string, unknown>, id: string, now: number, actor: { id: string; type: string } | null): Rec {
  const rec = Object.assign(blankRow(res), values) as Rec;
  rec.id = id;
  rec.createdAt = now;
  rec.updatedAt = now;
  rec.createdByActorId = actor?.id ?? null;
  rec.updatedByActorId = actor?.id ?? null;
  rec.createdByActorType = actor?.type ?? null;
  rec.updatedByActorType = actor?.type ?? null;
  return rec;
}

/**
 * A row of `res` with every column null, made by the resource's compiled
 * mapper (one object literal): a row's columns added one by one (twenty for
 * a task) left it a slow dictionary object for everything that reads it after.
 */
function blankRow(res: Resource): Record<string, unknown> {
  let make = blankRows.get(res);
  if (!make) blankRows.set(res, (make = compileMapper(res.columns.map((c) => ({ out: c.key, from: c.key })))));
  return make(NOTHING);
}

/** No values at all, not even inherited ones (a column named like an Object method reads null too). */
const NOTHING: Record<string, unknown> = Object.freeze(Object.create(null));
const blankRows = new WeakMap<Resource, Mapper>();

/** A new row written through the API: a fresh id and the common stamps of the calling actor. */
export async function newRecord(ctx: WriteContext, res: Resource, values: Record<string, unknown>): Promise<Rec> {
  const actor = await ctx.actor();
  const rec = rowOf(res, values, ctx.ids.id(), ctx.stamp(), actor);
  // Member stamps (`memberStamps`): the calling member, or null when the service writes.
  if (res.memberStamps) rec.createdById = rec.updatedById = ctx.principal.memberId || null;
  return rec;
}

/**
 * A row the service writes itself (workspace seeding, the admin API): no
 * actor (spec "Conventions": null for records created any other way). The
 * repository encodes it, so no column is spelled here.
 */
export async function seedRecord(repo: Repo, ids: IdGenerator, res: Resource, teamId: string, values: Record<string, unknown>, now: number): Promise<Rec> {
  const rec = rowOf(res, values, ids.id(), now, null);
  await repo.insert(res, teamId, rec);
  return rec;
}

/**
 * Store `values` on a row read under a row lock (or in a serialised writer),
 * with the common stamps of the change (a strictly later `updatedAt`, the
 * calling actor); returns the row as it now is. The caller announces it.
 */
export async function stampChange(ctx: WriteContext, res: Resource, current: Rec, values: Record<string, unknown>): Promise<Rec> {
  const all = { ...values, ...(await ctx.touch(current.updatedAt)) };
  await ctx.repo.update(res, ctx.teamId, current.id, all);
  return { ...current, ...all } as Rec;
}

/** Spec "Standard operations" rule 10: a write naming the updatedAt it last read is refused with 409 stale_write when the row changed since. */
export function assertUnchangedSince(res: Resource, current: Rec, expectedUpdatedAt: number | undefined): void {
  if (expectedUpdatedAt !== undefined && expectedUpdatedAt !== current.updatedAt) {
    throw new ProblemError('stale_write', `${res.name} ${current.id} changed since ${iso(expectedUpdatedAt)}`, {
      currentUpdatedAt: iso(current.updatedAt),
    });
  }
}

/** Update a row from a hook (a moved subtask, a cleared reference) and emit `updated`. */
export async function patchRecord(ctx: WriteContext, res: Resource, stale: Rec, values: Record<string, unknown>): Promise<Rec> {
  // Re-read under a row lock so updatedAt stays strictly increasing against concurrent writers.
  const rec = (await ctx.repo.get(res, ctx.teamId, stale.id, { lock: true, includeTrashed: true })) ?? stale;
  const after = await stampChange(ctx, res, rec, values);
  await announce(ctx, res, after, 'updated');
  await followProject(ctx, res, rec, after);
  return after;
}

/**
 * Rows whose project derives from `res` (`projectFrom`) follow a row of it
 * that moved to another project, each with its `updated` event, and theirs in turn.
 */
export async function followProject(ctx: WriteContext, res: Resource, before: Rec, after: Rec): Promise<void> {
  const key = res.projectKey;
  if (!key || after[key] === before[key]) return;
  for (const other of ctx.registry.all()) {
    if (!other.projectFrom || other.fields[other.projectFrom]!.ref !== res.name) continue;
    const dependants = await ctx.repo.findWhere(other, ctx.teamId, { [other.projectFrom]: after.id });
    for (const d of dependants) await patchRecord(ctx, other, d, { [other.projectField!]: after[key] });
  }
}

/** Ids per statement when dropping links (bound parameters stay well under every store's limit). */
const LINK_CHUNK = 500;

/**
 * Destroy rows of `res` for good with their links: those they hold (their
 * relations) and those pointing at them (other resources' relations that
 * target `res`), dropped in chunks of ids, then the rows. Their hooks,
 * events and dependants are the caller's, before this.
 */
export async function destroyRows(ctx: WriteContext, res: Resource, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const own = Object.keys(res.relations ?? {}).map((r) => `${res.name}.${r}`);
  const pointing = ctx.registry.all().flatMap((o) => Object.entries(o.relations ?? {}).filter(([, rel]) => rel.target === res.name).map(([n]) => `${o.name}.${n}`));
  for (let i = 0; i < ids.length; i += LINK_CHUNK) {
    await ctx.repo.dropLinks({ kinds: own, parentIds: ids.slice(i, i + LINK_CHUNK) });
    await ctx.repo.dropLinks({ kinds: pointing, relatedIds: ids.slice(i, i + LINK_CHUNK) });
  }
  await ctx.repo.destroy(res, ctx.teamId, ids);
}

/**
 * Remove for good the rows that reference these ones with `onDelete:
 * 'cascade'` (a task's checklists, a checklist's items), and theirs in turn,
 * each announced as removed. Call it before the rows themselves go.
 */
export async function destroyDependants(ctx: WriteContext, res: Resource, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  for (const other of ctx.registry.all()) {
    for (const [field, def] of Object.entries(other.fields)) {
      if (def.onDelete !== 'cascade') continue;
      if (def.ref !== res.name && !def.refTypeField) continue;
      // `delete` locked (sql/repo.ts RowLock): a write referencing a child (key-share lock) finishes first, so its row is found below.
      let children = await ctx.repo.findBy(other, ctx.teamId, other.columnOf[field]!, ids, { includeTrashed: true, lock: 'delete' });
      // A polymorphic reference points here only where its type field names this resource.
      if (def.refTypeField) children = children.filter((c) => c[def.refTypeField!] === res.name);
      if (children.length === 0) continue;
      for (const c of children) {
        await other.hooks?.beforeDestroy?.(ctx, c);
        await announce(ctx, other, c, 'removed');
      }
      const childIds = children.map((c) => c.id);
      await destroyDependants(ctx, other, childIds);
      await destroyRows(ctx, other, childIds);
    }
  }
}

/**
 * Who may see a record of a resource with members-only or private rows: the
 * members of its chat, the creator of its private document (both where both
 * apply); undefined for a record everyone who opens its project sees.
 * Events of such records reach only webhooks those members registered.
 */
export async function audienceOf(ctx: WriteContext, res: Resource, rec: Rec): Promise<string[] | undefined> {
  let audience: string[] | undefined;
  const o = res.ownerRead;
  if (o) {
    const projectId = res.projectField ? rec[res.projectField] : undefined;
    audience = await ownerAudience(ctx, rec[o.field], o.widenedBy, typeof projectId === 'string' ? projectId : undefined);
  }
  const p = res.privateTo;
  if (p && rec[p.field] === p.value) {
    const owner = typeof rec[p.owner] === 'string' ? [rec[p.owner] as string] : [];
    audience = audience ? audience.filter((id) => owner.includes(id)) : owner;
  }
  const m = res.membersOnly;
  const row = m ? (m.field ? rec[m.field] : rec.id) : undefined;
  if (m && typeof row === 'string') {
    const members = (await ctx.repo.linksOf(m.links, [row])).get(row) ?? [];
    audience = audience ? audience.filter((id) => members.includes(id)) : members;
  }
  return audience;
}

/** Emit a lifecycle event carrying the resource's current response form (`audience`: computed from the record unless given). */
export async function announce(ctx: WriteContext, res: Resource, rec: Rec, action: string, audience?: readonly string[]): Promise<void> {
  if (!res.events) return;
  const payload = await presentRecord(ctx, res, rec);
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

/** A record's response form as events carry it (a resource may bound it: message text). */
export function eventPayload(res: Resource, shown: Record<string, unknown>): Record<string, unknown> {
  return res.hooks?.forEvent ? res.hooks.forEvent(shown) : shown;
}

/** An active member as audiences weigh them: role name (guests are `client`) and the role's permissions. */
interface Reader { id: string; role: string; permissions: ReadonlySet<string> }

/**
 * What audiences read, once per write (a task deleted with 150 time entries
 * reads roles and members once, and each project once): the active members
 * with their roles' permissions, and per project who may open it.
 */
const audienceMemo = new WeakMap<WriteContext, { readers?: Promise<Reader[]>; openers: Map<string, Promise<(m: Reader) => boolean>> }>();

function memoOf(ctx: WriteContext) {
  let m = audienceMemo.get(ctx);
  if (!m) audienceMemo.set(ctx, (m = { openers: new Map() }));
  return m;
}

function activeReaders(ctx: WriteContext): Promise<Reader[]> {
  const memo = memoOf(ctx);
  memo.readers ??= (async () => {
    const roles = new Map<string, ReadonlySet<string>>();
    for (const r of await ctx.repo.findWhere(ctx.registry.get('role'), ctx.teamId, {})) roles.set(r.id, new Set(effectivePermissions(ctx.registry, r)));
    const members = await ctx.repo.findWhere(ctx.registry.get('member'), ctx.teamId, { active: true });
    return members.map((m) => ({ id: m.id, role: String(m.role), permissions: roles.get(m.roleId as string) ?? new Set<string>() }));
  })();
  return memo.readers;
}

/** Who may open a project: the rule of services/access.ts ProjectAccess.canOpen, for any member; read now. */
async function openersNow(ctx: WriteContext, projectId: string): Promise<(m: Reader) => boolean> {
  const project = await ctx.repo.get(ctx.registry.get('project'), ctx.teamId, projectId, { includeTrashed: true });
  const members = new Set(project ? (await ctx.repo.linksOf('project.members', [projectId])).get(projectId) ?? [] : []);
  const open = !!project && (project.accessType === 'public' || project.accessType === 'workspace');
  return (m: Reader) => m.permissions.has('viewAllProjects')
    || (!!project && (project.ownerId === m.id || members.has(m.id) || (open && m.role !== 'client')));
}

/** {@link openersNow}, read once per write and project (audiences). */
function projectOpeners(ctx: WriteContext, projectId: string): Promise<(m: Reader) => boolean> {
  const memo = memoOf(ctx);
  let p = memo.openers.get(projectId);
  if (!p) {
    p = openersNow(ctx, projectId);
    memo.openers.set(projectId, p);
  }
  return p;
}

/**
 * May this member (any member, not only the caller) open the project? The
 * rule of {@link projectOpeners}, for one member read with their role, as
 * the project and the role are now (not memoised: asked right after a roster,
 * access or role change of the same write): a handoff's recipient must be
 * able to open the task's project.
 */
export async function memberOpensProject(ctx: WriteContext, member: Rec, projectId: string): Promise<boolean> {
  const role = typeof member.roleId === 'string' ? await ctx.repo.get(ctx.registry.get('role'), ctx.teamId, member.roleId) : undefined;
  const reader: Reader = { id: member.id, role: String(member.role), permissions: new Set(role ? effectivePermissions(ctx.registry, role) : []) };
  return (await openersNow(ctx, projectId))(reader);
}

/**
 * The owner of an `ownerRead` row and the active members whose role holds
 * the permission that widens reads to it; of a row of a project, only those
 * of them who may open the project (as reading the row needs).
 */
async function ownerAudience(ctx: WriteContext, owner: unknown, widenedBy: string, projectId?: string): Promise<string[]> {
  const readers = await activeReaders(ctx);
  const opens = projectId === undefined ? () => true : await projectOpeners(ctx, projectId);
  const out: string[] = [];
  for (const m of readers) if ((m.id === owner || m.permissions.has(widenedBy)) && opens(m)) out.push(m.id);
  return out;
}
