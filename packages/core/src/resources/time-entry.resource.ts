import { ProblemError } from '../errors/problem';
import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import type { WriteContext } from './hooks';
import { fieldError } from './rules';

/*
 * Time entries (spec "Other resources": fields not shown; "Events": lifecycle
 * resource timeEntry; "Authentication" rule 5: `viewTimeReports` widens
 * time-entry reads to the whole team, time-entry search stays on the
 * caller's own entries). Every decision: docs/not-shown.md "Time entries".
 */

/** Longest single entry: one day (86,400 seconds). */
export const TIME_ENTRY_MAX_SECONDS = 24 * 60 * 60;
export const TIME_ENTRY_DESCRIPTION_MAX = 5_000;

/**
 * Time spent by a member on a task, from `startAt` to `endAt` (both
 * required; `durationSeconds` is derived). The member is the creator
 * (`memberId`, server-set); the entry lives in its task's project
 * (`projectId`, read-only, follows the task) and goes with the task when it
 * is deleted. A member reads their own entries; `viewTimeReports` widens
 * reads to everyone's. Only the member changes or deletes an entry.
 */
export const timeEntryResource = defineResource({
  name: 'timeEntry',
  path: 'time-entries',
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write', 'delete'] },
  fields: {
    taskId: f.ref('task', { required: true, mode: 'createOnly', onDelete: 'cascade' }),
    memberId: f.readOnly('text'),
    projectId: f.readOnly('text'),
    startAt: f.timestamp({ required: true }),
    endAt: f.timestamp({ required: true }),
    durationSeconds: f.readOnly('number'),
    description: f.string({ trim: true, max: TIME_ENTRY_DESCRIPTION_MAX, nullable: true }),
    billable: f.boolean(),
  },
  projectField: 'projectId',
  projectFrom: 'taskId',
  listParams: { projectId: {} },
  ownerRead: { field: 'memberId', widenedBy: 'viewTimeReports' },
  filters: {
    memberId: { ops: ['eq', 'in'] },
    projectId: { ops: ['eq', 'in'] },
    startAt: { ops: RANGE },
    endAt: { ops: RANGE },
    durationSeconds: { ops: RANGE },
    billable: { ops: ['eq'] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  defaultSort: '-startAt',
  expand: {
    member: { kind: 'one', target: 'member', field: 'memberId' },
    project: { kind: 'one', target: 'project', field: 'projectId' },
  },
  hooks: {
    beforeCreate(ctx, input) {
      input.memberId = ctx.principal.memberId;
      input.description ??= null;
      input.billable ??= false;
      input.durationSeconds = span(input.startAt as number, input.endAt as number);
    },
    beforeUpdate(ctx, current, patch) {
      ownOnly(ctx, current, 'change');
      if ('startAt' in patch || 'endAt' in patch) patch.durationSeconds = span(patch.startAt ?? current.startAt, patch.endAt ?? current.endAt);
    },
    beforeDelete(ctx, rec) {
      ownOnly(ctx, rec, 'delete');
    },
  },
});

/** The seconds from start to end: end strictly after start, at most a day apart. */
function span(startAt: number, endAt: number): number {
  if (endAt <= startAt) throw fieldError('endAt', 'before_start', 'endAt must be after startAt');
  const seconds = (endAt - startAt) / 1000;
  if (seconds > TIME_ENTRY_MAX_SECONDS) throw fieldError('endAt', 'too_long', `an entry spans at most ${TIME_ENTRY_MAX_SECONDS} seconds (24 hours)`);
  return seconds;
}

/** Only the member whose time it is changes or deletes an entry (viewTimeReports widens reads only). */
function ownOnly(ctx: WriteContext, rec: Rec, what: string): void {
  if (rec.memberId !== ctx.principal.memberId) {
    throw new ProblemError('permission_denied', `Only the member whose time it is may ${what} a time entry`, { missingPermissions: [] });
  }
}
