import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import { fieldError } from './rules';
import { ProblemError } from '../errors/problem';
import { announce } from '../services/records';
import type { WriteContext } from './hooks';

/*
 * Presence statuses ("Other resources": fields not shown): what a member
 * shows the workspace about their availability. One per member (`memberId`,
 * server-set to the caller; a second create is 409 conflict): `emoji`,
 * `text`, `availability` (available, busy, away, doNotDisturb; default
 * available) and `until` (when it lapses; null: until cleared; must lie
 * after now when written). Everyone in the workspace (guests too) reads every
 * status; only its member changes it, and only its member or a holder of
 * manageMembers deletes it (403 permission_denied for anyone else). A
 * status whose `until` has passed stays stored and listed but reads with
 * `expired: true` (computed); `until[gt]=<now>` lists current ones.
 * Hard-deleted (clearing a status). A member deactivated, removed, erased
 * or purged loses their status ({@link clearPresenceOf}). Every decision:
 * docs/not-shown.md "Presence statuses".
 */

export const PRESENCE_AVAILABILITY = ['available', 'busy', 'away', 'doNotDisturb'] as const;
export const PRESENCE_TEXT_MAX = 100;
export const PRESENCE_EMOJI_MAX = 32;

function checkUntil(until: number | null | undefined, now: number): void {
  if (typeof until === 'number' && until <= now) throw fieldError('until', 'not_in_future', 'must be after now');
}

function notYours(): ProblemError {
  return new ProblemError('permission_denied', 'Only its member changes a presence status; only its member or a holder of manageMembers clears it', { missingPermissions: [] });
}

export const presenceStatusResource = defineResource({
  name: 'presenceStatus',
  path: 'presence-statuses',
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write', 'delete'] },
  fields: {
    memberId: f.readOnly('text'),
    emoji: f.string({ trim: true, min: 1, max: PRESENCE_EMOJI_MAX, nullable: true }),
    text: f.string({ trim: true, max: PRESENCE_TEXT_MAX, nullable: true }),
    availability: f.enum(PRESENCE_AVAILABILITY),
    until: f.timestamp({ nullable: true }),
  },
  filters: {
    memberId: { ops: ['eq', 'in'] },
    availability: { ops: ['eq', 'in'] },
    until: { ops: ['null', 'notNull', ...RANGE] },
    createdAt: { ops: RANGE },
  },
  defaultSort: '-updatedAt',
  extraResponseFields: ['expired'],
  expand: { member: { kind: 'one', target: 'member', field: 'memberId' } },
  hooks: {
    async beforeCreate(ctx, input) {
      input.memberId = ctx.principal.memberId;
      // The caller's membership locked: two creates take turns (one status each), and a concurrent deactivation
      // or removal either waits and then clears this status, or came first and refuses it.
      const me = await ctx.repo.get(ctx.registry.get('member'), ctx.teamId, input.memberId, { lock: true, includeTrashed: true });
      if (!me || me.active !== true || me.purgeAt !== null) throw new ProblemError('token_owner_inactive', 'Your membership was deactivated or removed');
      const mine = await ctx.repo.findWhere(ctx.registry.get('presenceStatus'), ctx.teamId, { memberId: input.memberId }, { limit: 1 });
      if (mine[0]) throw new ProblemError('conflict', `You already have a presence status (${mine[0].id}); update it instead`, { id: mine[0].id });
      checkUntil(input.until, ctx.now);
      input.emoji ??= null;
      input.text ??= null;
      input.until ??= null;
      input.availability ??= 'available';
    },
    beforeUpdate(ctx, current, patch) {
      if (current.memberId !== ctx.principal.memberId) throw notYours();
      if (patch.until !== undefined) checkUntil(patch.until, ctx.now);
    },
    beforeDelete(ctx, rec) {
      // Those who manage members may also clear anyone's status (an outdated or unfitting one).
      if (rec.memberId !== ctx.principal.memberId && !ctx.principal.permissions.has('manageMembers')) throw notYours();
    },
    present(ctx, rec, out) {
      out.expired = typeof rec.until === 'number' && rec.until <= ctx.now;
    },
  },
});

/**
 * A member who is deactivated, removed, erased or purged shows no presence
 * any more: their status is deleted (`presenceStatus.removed`). The caller
 * holds the member's row lock, so no new status of theirs appears meanwhile.
 * docs/not-shown.md "Presence statuses".
 */
export async function clearPresenceOf(ctx: WriteContext, memberId: string): Promise<void> {
  const res = ctx.registry.get('presenceStatus');
  const rows = await ctx.repo.findWhere(res, ctx.teamId, { memberId });
  if (rows.length === 0) return;
  for (const row of rows) await announce(ctx, res, row, 'removed');
  await ctx.repo.destroy(res, ctx.teamId, rows.map((r) => r.id));
}
