import { ProblemError } from '../errors/problem';
import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import { initialsOf, nextOrder, paletteColor, secondaryOf } from './rules';

/** Portfolios (spec "Portfolio"): team-scoped groupings of projects, soft-deleted. */
export const portfolioResource = defineResource({
  name: 'portfolio',
  policy: { client: ['read'] },
  path: 'portfolios',
  softDelete: true,
  fields: {
    name: f.string({ trim: true, min: 1, max: 100, required: true }),
    icon: f.url({ nullable: true }),
    initials: f.string({ trim: true, min: 1, max: 3 }),
    color: f.hexColor(),
    secondaryColor: f.readOnly('text'),
    isGeneral: f.readOnly('boolean'),
    order: f.number(),
    ownerId: f.ref('member', { mode: 'updateOnly', filter: false }),
    members: f.refs('members', { target: 'member' }),
  },
  filters: {
    purgeAt: { ops: ['null', 'notNull', ...RANGE] },
    name: { ops: ['eq', 'contains', 'startsWith'] },
    isGeneral: { ops: ['eq'] },
    order: { ops: ['eq', ...RANGE] },
    createdAt: { ops: RANGE },
  },
  defaultSort: 'order',
  hooks: {
    async beforeCreate(ctx, input) {
      input.initials ??= initialsOf(input.name!);
      input.color ??= paletteColor(ctx);
      input.secondaryColor = secondaryOf(input.color);
      input.isGeneral = false;
      input.order ??= await nextOrder(ctx, 'portfolio', {}, 1);
      input.ownerId = ctx.principal.memberId;
    },
    beforeUpdate(_ctx, _current, patch) {
      if (typeof patch.color === 'string') patch.secondaryColor = secondaryOf(patch.color);
    },
    async beforeDelete(ctx, rec) {
      if (rec.isGeneral) throw new ProblemError('conflict', 'The General portfolio cannot be deleted');
      const projects = ctx.registry.get('project');
      const held = await ctx.repo.findBy(projects, ctx.teamId, 'portfolio_id', [rec.id], { limit: 1 });
      if (held.length) throw new ProblemError('conflict', 'The portfolio still holds projects; move or delete them first');
    },
  },
});
