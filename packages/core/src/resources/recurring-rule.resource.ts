import { ProblemError } from '../errors/problem';
import { dateOf, localDay } from '../clock/zone';
import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import { rejectPromotional, sameProject } from './rules';
import { patchRecord } from '../services/records';
import { ensureServiceActorIn } from '../sql/queries/actors';
import { workspaceTimezone } from '../sql/queries/workspaces';
import {
  dateSchema, daysSchema, nextRunOf, RECURRING_COUNT_MAX, RECURRING_DEFAULT_TIME, RECURRING_FREQUENCIES, RECURRING_INTERVAL_MAX,
  SCHEDULE_FIELDS, scheduleChanged, shapeSchedule, timeSchema, type ScheduleRec,
} from './recurring-schedule';

/*
 * Recurring rules (spec "Other resources": fields not shown; decisions in
 * docs/not-shown.md "Recurring rules"). A rule is a schedule plus the
 * template of the task each occurrence creates. The schedule is read in the
 * workspace timezone: `startDate`/`endDate` are calendar dates there and
 * `timeOfDay` a wall-clock time there. `nextRunAt` (read-only) is the instant
 * of the next occurrence, null while paused or once the rule has ended; the
 * job `api.jobs.recurring()` (jobs/recurring.ts) fires due rules. The
 * schedule's rules and calendar are in recurring-schedule.ts.
 */

/**
 * Longest rule `description`: the description of every task the rule makes
 * and part of every recurringRule.* and task.created event, so it stays far
 * under the 1 MiB webhook payload cap (as message events carry at most
 * 100,000 characters of text).
 */
export const RECURRING_DESCRIPTION_MAX = 100_000;

/** Recurring rules (`/recurring-rules`): hard-deleted; tasks and lists made from a rule keep living with recurringRuleId null. */
export const recurringRuleResource = defineResource({
  name: 'recurringRule',
  path: 'recurring-rules',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    // The template of each task an occurrence creates.
    name: f.string({ trim: true, min: 1, max: 1024, required: true }),
    description: f.string({ max: RECURRING_DESCRIPTION_MAX, nullable: true }),
    projectId: f.ref('project', { mode: 'createOnly', onDelete: 'cascade' }),
    listId: f.ref('list', { nullable: true }),
    statusId: f.ref('status', { nullable: true }),
    // The schedule.
    frequency: f.enum(RECURRING_FREQUENCIES, { required: true }),
    interval: f.integer({ min: 1, max: RECURRING_INTERVAL_MAX }),
    daysOfWeek: f.json(daysSchema, { nullable: true }),
    dayOfMonth: f.integer({ min: 1, max: 31, nullable: true }),
    timeOfDay: f.text(timeSchema),
    startDate: f.text(dateSchema),
    endDate: f.text(dateSchema, { nullable: true }),
    count: f.integer({ min: 1, max: RECURRING_COUNT_MAX, nullable: true }),
    active: f.boolean(),
    // Server-kept state.
    occurrences: f.readOnly('integer'),
    nextRunAt: f.readOnly('timestamp', { nullable: true }),
    lastRunAt: f.readOnly('timestamp', { nullable: true }),
    /** The recurringTask actor the rule's tasks are attributed to (one per rule, made with it). */
    actorId: f.readOnly('text'),
  },
  projectField: 'projectId',
  listParams: { projectId: {} },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    frequency: { ops: ['eq', 'in'] },
    active: { ops: ['eq'] },
    nextRunAt: { ops: [...RANGE, 'null', 'notNull'] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  sortable: ['name'],
  defaultSort: 'createdAt',
  defaultSortWithoutProject: '-updatedAt',
  expand: {
    actor: { kind: 'one', target: 'actor', field: 'actorId' },
    tasks: { kind: 'children', target: 'task', field: 'recurringRuleId' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      rejectPromotional('name', input.name);
      if (typeof input.projectId !== 'string') throw new ProblemError('project_not_specified', 'A recurring rule needs a projectId');
      const tz = await workspaceTimezone(ctx.repo, ctx.teamId);
      input.interval ??= 1;
      input.timeOfDay ??= RECURRING_DEFAULT_TIME;
      input.startDate ??= dateOf(localDay(ctx.now, tz));
      input.active ??= true;
      input.endDate ??= null;
      input.count ??= null;
      await sameProject(ctx, input.projectId, input);
      shapeSchedule(input, input, input);
      input.occurrences = 0;
      input.lastRunAt = null;
      input.nextRunAt = nextRunOf(input as ScheduleRec, tz, ctx.now);
      // The rule's own actor (spec "Actor": type recurringTask), written with it.
      input.actorId = await ensureServiceActorIn(ctx.repo, ctx.registry.get('actor').table, {
        id: ctx.ids.uuid(), teamId: ctx.teamId, type: 'recurringTask', displayName: `Recurring: ${input.name!}`.slice(0, 255), now: ctx.now,
      });
    },
    async beforeUpdate(ctx, current, patch) {
      if ('name' in patch) rejectPromotional('name', patch.name);
      await sameProject(ctx, current.projectId as string, patch);
      if (!SCHEDULE_FIELDS.some((k) => k in patch)) return;
      shapeSchedule({ ...current, ...patch }, patch, patch);
      const next = { ...current, ...patch };
      // Values sent as they were (active: true on an active rule, …) move nothing.
      if (!scheduleChanged(current, next)) return;
      const tz = await workspaceTimezone(ctx.repo, ctx.teamId);
      // An occurrence already due but not yet fired stays due: the change schedules from it, not from now.
      const due = current.active === true && typeof current.nextRunAt === 'number' && current.nextRunAt <= ctx.now;
      patch.nextRunAt = nextRunOf(next as ScheduleRec, tz, due ? Math.min(ctx.now, current.nextRunAt as number) : ctx.now);
    },
    async beforeDestroy(ctx, rec) {
      // What the rule made stays; it only forgets the rule.
      for (const name of ['task', 'list']) {
        const res = ctx.registry.get(name);
        for (const row of await ctx.repo.findBy(res, ctx.teamId, res.columnOf.recurringRuleId!, [rec.id])) await patchRecord(ctx, res, row, { recurringRuleId: null });
      }
    },
  },
});
