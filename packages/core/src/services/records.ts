import type { Rec, Resource } from '../resources/define-resource';
import type { WriteContext } from './context';
import type { Repo } from '../sql/repo';
import type { IdGenerator } from '../ids/index';
import { materialize, EXPAND_ROW_BUDGET } from './serialize';

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
  const rec: Rec = {
    ...values,
    id,
    createdAt: now,
    updatedAt: now,
    createdByActorId: actor?.id ?? null,
    updatedByActorId: actor?.id ?? null,
    createdByActorType: actor?.type ?? null,
    updatedByActorType: actor?.type ?? null,
  };
  for (const c of res.columns) if (!(c.key in rec)) rec[c.key] = null;
  return rec;
}

/** A new row written through the API: a fresh id and the common stamps of the calling actor. */
export async function newRecord(ctx: WriteContext, res: Resource, values: Record<string, unknown>): Promise<Rec> {
  const actor = await ctx.actor();
  return rowOf(res, values, ctx.ids.id(), ctx.stamp(), actor);
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

/** Update a row from a hook (a moved subtask, a cleared reference) and emit `updated`. */
export async function patchRecord(ctx: WriteContext, res: Resource, stale: Rec, values: Record<string, unknown>): Promise<Rec> {
  // Re-read under a row lock so updatedAt stays strictly increasing against concurrent writers.
  const rec = (await ctx.repo.get(res, ctx.teamId, stale.id, { lock: true, includeTrashed: true })) ?? stale;
  const all = { ...values, ...(await ctx.touch(rec.updatedAt)) };
  await ctx.repo.update(res, ctx.teamId, rec.id, all);
  const after = { ...rec, ...all } as Rec;
  await announce(ctx, res, after, 'updated');
  return after;
}

/** Emit a lifecycle event carrying the resource's current response form. */
export async function announce(ctx: WriteContext, res: Resource, rec: Rec, action: string): Promise<void> {
  if (!res.events) return;
  const [payload] = await materialize(ctx, res, [rec], { expand: { children: new Map() }, fields: new Map(), budget: { used: 0, max: EXPAND_ROW_BUDGET } });
  ctx.emit({
    type: `${res.name}.${action}`,
    aggregateType: res.name,
    aggregateId: rec.id,
    projectId: res.projectIdOf(rec),
    payload: { [res.name]: payload },
  });
}
