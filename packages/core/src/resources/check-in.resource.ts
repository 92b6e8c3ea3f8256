import { ProblemError } from '../errors/problem';
import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import type { WriteContext } from './hooks';
import { fieldError } from './rules';
import { patchRecord } from '../services/records';

/*
 * Check-ins and check-in requests (spec "Other resources": fields not shown;
 * "Events": lifecycle resources checkIn and checkInRequest, membership
 * relations checkIn.assignees, checkIn.subscribers, checkInRequest.assignees).
 * Every decision taken here: docs/not-shown.md "Check-ins and check-in requests".
 */

/** Longest check-in text, in characters. */
export const CHECK_IN_TEXT_MAX = 65_535;
/** Longest check-in request question, in characters. */
export const CHECK_IN_QUESTION_MAX = 500;
/** How a check-in rates the project's health. */
export const CHECK_IN_HEALTH = ['onTrack', 'atRisk', 'offTrack'] as const;
/** How often a check-in request asks its assignees. */
export const CHECK_IN_FREQUENCIES = ['once', 'daily', 'weekdays', 'weekly', 'biweekly', 'monthly'] as const;

/**
 * Check-ins: status updates members post in a project. `assignees` are the
 * members asked to read and respond, `subscribers` those notified of
 * replies. Hard-deleted. A check-in may answer a check-in request of the
 * same project (`checkInRequestId`, set once).
 */
export const checkInResource = defineResource({
  name: 'checkIn',
  path: 'check-ins',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    text: f.string({ trim: true, min: 1, max: CHECK_IN_TEXT_MAX, required: true }),
    health: f.enum(CHECK_IN_HEALTH, { nullable: true }),
    projectId: f.ref('project', { mode: 'createOnly', onDelete: 'cascade' }),
    checkInRequestId: f.ref('checkInRequest', { mode: 'createOnly', nullable: true }),
    createdById: f.readOnly('text', { nullable: true }),
    assignees: f.refs('assignees', { target: 'member' }),
    subscribers: f.refs('subscribers', { target: 'member' }),
  },
  projectField: 'projectId',
  listParams: { projectId: {} },
  filters: {
    text: { ops: ['contains'] },
    health: { ops: ['eq', 'in', 'null', 'notNull'] },
    checkInRequestId: { ops: ['eq', 'in', 'null', 'notNull'] },
    createdById: { ops: ['eq', 'in'] },
    assigneeId: { ops: ['eq', 'in'], relation: 'assignees' },
    subscriberId: { ops: ['eq', 'in'], relation: 'subscribers' },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  defaultSort: '-createdAt',
  expand: {
    createdBy: { kind: 'one', target: 'member', field: 'createdById' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      if (typeof input.projectId !== 'string') throw new ProblemError('project_not_specified', 'A check-in needs a projectId');
      input.health ??= null;
      input.checkInRequestId ??= null;
      input.createdById = ctx.principal.memberId;
      if (typeof input.checkInRequestId === 'string') {
        const request = await ctx.mustGet('checkInRequest', input.checkInRequestId, 'checkInRequestId');
        if (request.projectId !== input.projectId) throw fieldError('checkInRequestId', 'wrong_project', 'must be a check-in request of the same project');
      }
    },
  },
});

/**
 * Check-in requests: a question a project asks its assignees, once or on a
 * schedule (`frequency` from `startAt`, until `endAt` when set; `paused`
 * stops asking). Hard-deleted; the check-ins that answered one stay, with
 * `checkInRequestId` null.
 */
export const checkInRequestResource = defineResource({
  name: 'checkInRequest',
  path: 'check-in-requests',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    question: f.string({ trim: true, min: 1, max: CHECK_IN_QUESTION_MAX, required: true }),
    projectId: f.ref('project', { mode: 'createOnly', onDelete: 'cascade' }),
    frequency: f.enum(CHECK_IN_FREQUENCIES),
    startAt: f.timestamp({ required: true }),
    endAt: f.timestamp({ nullable: true }),
    paused: f.boolean(),
    createdById: f.readOnly('text', { nullable: true }),
    assignees: f.refs('assignees', { target: 'member' }),
  },
  projectField: 'projectId',
  listParams: { projectId: {} },
  filters: {
    question: { ops: ['eq', 'contains', 'startsWith'] },
    frequency: { ops: ['eq', 'in'] },
    paused: { ops: ['eq'] },
    startAt: { ops: RANGE },
    endAt: { ops: ['null', 'notNull', ...RANGE] },
    createdById: { ops: ['eq', 'in'] },
    assigneeId: { ops: ['eq', 'in'], relation: 'assignees' },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  defaultSort: '-createdAt',
  expand: {
    createdBy: { kind: 'one', target: 'member', field: 'createdById' },
    checkIns: { kind: 'children', target: 'checkIn', field: 'checkInRequestId' },
  },
  hooks: {
    beforeCreate(ctx, input) {
      if (typeof input.projectId !== 'string') throw new ProblemError('project_not_specified', 'A check-in request needs a projectId');
      input.frequency ??= 'weekly';
      input.paused ??= false;
      input.endAt ??= null;
      input.createdById = ctx.principal.memberId;
      schedule(input, input);
    },
    beforeUpdate(_ctx, current, patch) {
      schedule({ ...current, ...patch }, patch);
    },
    async beforeDestroy(ctx, rec) {
      // Destroyed with its project (a purge): its check-ins go too, each with checkIn.removed and no checkIn.updated first.
      if (await projectGoing(ctx, rec.projectId as string)) return;
      await forgetRequest(ctx, rec.id);
    },
  },
});

/** A one-off request has no end (forced null); a recurring one ends, when it does, after it starts. */
function schedule(merged: { frequency?: string | null; startAt?: number | null; endAt?: number | null }, out: { endAt?: number | null }) {
  if (merged.frequency === 'once') {
    out.endAt = null;
    return;
  }
  if (typeof merged.endAt === 'number' && typeof merged.startAt === 'number' && merged.endAt <= merged.startAt) {
    throw fieldError('endAt', 'before_start', 'endAt must be after startAt');
  }
}

/** Is this project being removed for good (purged: past its purgeAt) in this write? */
async function projectGoing(ctx: WriteContext, projectId: string): Promise<boolean> {
  const project = await ctx.repo.get(ctx.registry.get('project'), ctx.teamId, projectId, { includeTrashed: true });
  return !project || (typeof project.purgeAt === 'number' && project.purgeAt <= ctx.now);
}

/** The check-ins that answered a removed request stay, answering none. */
async function forgetRequest(ctx: WriteContext, requestId: string): Promise<void> {
  const checkIns = ctx.registry.get('checkIn');
  for (const c of await ctx.repo.findBy(checkIns, ctx.teamId, checkIns.columnOf.checkInRequestId!, [requestId])) {
    await patchRecord(ctx, checkIns, c, { checkInRequestId: null });
  }
}
