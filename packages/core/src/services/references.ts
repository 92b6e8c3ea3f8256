/**
 * What the standard operations check of the records a write names: reference
 * fields and relation sets (each target exists in the workspace, is served and
 * may be opened), the `{"ids": [...]}` body of a relation sub-route, and which
 * rows the standard operations never serve.
 */
import { clip, notFound, ProblemError, validationError } from '../errors/problem';
import type { Rec, Resource } from '../resources/define-resource';
import { OversizedArray } from '../http/body';
import type { WriteContext } from './context';

/** A row the standard operations never serve (`unlisted`: a project's discussion chat). */
export function unlisted(res: Resource, rec: Rec): boolean {
  return !!res.unlisted && rec[res.unlisted.field] === res.unlisted.value;
}

/**
 * Check every id of a relation set exists in the workspace: else 404
 * m2m_target_not_found with `missing`. Ids in `linked` (the set as it is)
 * may name rows no longer live (a trashed project): keeping or unlinking
 * such a link is allowed. The targets are key-share locked (sql/repo.ts
 * RowLock): one deleted meanwhile waits, then drops the new link.
 */
export async function checkTargets(ctx: WriteContext, res: Resource, relation: string, parent: Rec | undefined, ids: string[], field?: string, linked?: () => Promise<ReadonlySet<string>>) {
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
export async function linkedIds(ctx: WriteContext, res: Resource, relation: string, id: string): Promise<ReadonlySet<string>> {
  return new Set((await ctx.repo.linksOf(`${res.name}.${relation}`, [id])).get(id) ?? []);
}

export async function checkRefs(ctx: WriteContext, res: Resource, values: Record<string, unknown>) {
  const refs: Array<{ key: string; id: string; def: NonNullable<Resource['fields'][string]>; target: Resource }> = [];
  for (const [key, v] of Object.entries(values)) {
    const def = res.fields[key];
    if (def?.ref && typeof v === 'string') refs.push({ key, id: v, def, target: ctx.registry.get(def.ref) });
  }
  if (refs.length === 0) return;
  // The rows are read together (one round trip on Postgres: a task's project and status), each read's outcome kept
  // as a value; then checked in field order, so the error answered is the one a check after check would give.
  // Key-share locked: a concurrent delete of the target waits, then sees (and cascades or clears) this reference
  // (unless the write's own hooks lock the row before it commits: `lockedByWrite`).
  const read = (r: (typeof refs)[number]) =>
    ctx.mustGet(r.target, r.id, r.key, r.def.lockedByWrite ? {} : { lock: 'share' }).then((rec) => ({ rec }), (failure: unknown) => ({ failure }));
  const outcomes = await ctx.repo.together(() => refs.map(read));
  for (let i = 0; i < refs.length; i++) {
    const { key, id, def, target } = refs[i]!;
    const o = outcomes[i]!;
    if ('failure' in o) throw o.failure;
    // A row its routes never serve (`unlisted`) is missing to a reference too, unless the field declares `reachesUnlisted`.
    if (unlisted(target, o.rec) && !def.reachesUnlisted) throw notFound(target.name, id, key);
    // A reference into a project the caller cannot open is refused like a direct access.
    await ctx.access.assertRecord(target, o.rec);
  }
}

/**
 * Of these ids of `target` records, the ones the caller may see: live
 * records they may open, and ids of no live record (nothing hides those).
 */
export async function visibleAmong(ctx: WriteContext, target: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return ids;
  const res = ctx.registry.get(target);
  const live = await ctx.repo.getMany(res, ctx.teamId, ids);
  const seen = new Set((await ctx.access.filterRecords(res, live)).map((r) => r.id));
  const exists = new Set(live.map((r) => r.id));
  return ids.filter((x) => seen.has(x) || !exists.has(x));
}

export function fieldOfRelation(res: Resource, relation: string): string | undefined {
  for (const [field, rel] of Object.entries(res.relationFields)) if (rel === relation) return field;
  return undefined;
}

/**
 * The body of a sub-resource request, `{"ids": [...]}`, validated exactly
 * (spec rule 13: purpose-built operation bodies): no other key, a non-empty
 * array (`batch_empty`) of at most `max` ids (`batch_too_large`, measured
 * before any element is looked at), each an id string.
 */
export function relationIds(body: unknown, max: number): string[] {
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
