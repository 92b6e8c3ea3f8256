import { z } from 'zod';
import { ProblemError } from '../errors/problem';
import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import { fieldError, rejectPromotional } from './rules';
import { patchRecord } from '../services/records';
import { workspaceTimezone } from '../sql/queries/workspaces';
import type { WriteContext } from './hooks';

/*
 * Recurring rules (spec "Other resources": fields not shown; decisions in
 * docs/not-shown.md "Recurring rules"). A rule is a schedule plus the
 * template of the task each occurrence creates. The schedule is read in the
 * workspace timezone: `startDate`/`endDate` are calendar dates there and
 * `timeOfDay` a wall-clock time there. `nextRunAt` (read-only) is the instant
 * of the next occurrence, null while paused or once the rule has ended; the
 * job `api.jobs.recurring()` (jobs/recurring.ts) fires due rules.
 */

export const RECURRING_FREQUENCIES = ['daily', 'weekly', 'monthly', 'yearly'] as const;
export type Frequency = (typeof RECURRING_FREQUENCIES)[number];
/** Days of the week, Monday first (ISO 8601 order). */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export const RECURRING_INTERVAL_MAX = 99;
export const RECURRING_COUNT_MAX = 1000;
export const RECURRING_DEFAULT_TIME = '09:00';

const DAY_MS = 24 * 60 * 60 * 1000;
const MINUTE_MS = 60 * 1000;

/** `YYYY-MM-DD` → days since 1970-01-01; undefined when not a real calendar date (or before 1970). */
export function dayOf(date: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return undefined;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo - 1)) return undefined;
  return Date.UTC(y, mo - 1, d) / DAY_MS;
}

/** Days since 1970-01-01 → `YYYY-MM-DD`. */
export function dateOf(day: number): string {
  const { y, m, d } = ymd(day);
  return `${String(y).padStart(4, '0')}-${String(m + 1).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

function ymd(day: number): { y: number; m: number; d: number } {
  // Date.UTC's inverse without constructing a Date: civil-from-days (H. Hinnant).
  const z0 = day + 719468;
  const era = Math.floor(z0 / 146097);
  const doe = z0 - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 2 : mp - 10;
  return { y: yoe + era * 400 + (m <= 1 ? 1 : 0), m, d };
}

function daysInMonth(y: number, m: number): number {
  return [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m]!;
}

/** 0 = Monday … 6 = Sunday (1970-01-01 was a Thursday). */
export function weekdayOf(day: number): number {
  return (((day + 3) % 7) + 7) % 7;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** A usable IANA zone name: the workspace's, or UTC when it has none or an unknown one. */
export function usableZone(tz: string | undefined | null): string {
  if (!tz) return 'UTC';
  if (formatters.has(tz)) return tz;
  try {
    formatters.set(tz, new Intl.DateTimeFormat('en-US', {
      timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    }));
    return tz;
  } catch {
    return 'UTC';
  }
}

/** Wall-clock time in `tz` at `instant`, as if it were UTC (ms). */
function wallClock(instant: number, tz: string): number {
  const fmt = formatters.get(usableZone(tz)) ?? formatters.get('UTC');
  if (!fmt) return instant;
  const p: Record<string, number> = {};
  for (const part of fmt.formatToParts(instant)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour! % 24, p.minute!, p.second!) + (instant % 1000 + 1000) % 1000;
}

/** The calendar date (days since epoch) in `tz` at `instant`. */
export function localDay(instant: number, tz: string): number {
  return Math.floor(wallClock(instant, tz) / DAY_MS);
}

/**
 * The instant at which the wall clock in `tz` shows `minute` minutes past
 * midnight on `day`. A time skipped by a daylight-saving change falls on the
 * instant the same offset arithmetic gives (an hour later or earlier).
 */
export function zonedInstant(day: number, minute: number, tz: string): number {
  const local = day * DAY_MS + minute * MINUTE_MS;
  const first = local - (wallClock(local, tz) - local);
  const second = local - (wallClock(first, tz) - first);
  return wallClock(second, tz) === local ? second : first;
}

/** `HH:MM` → minutes past midnight. */
function minuteOf(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

/** The schedule part of a rule. */
export interface Schedule {
  frequency: Frequency;
  interval: number;
  daysOfWeek: readonly string[] | null;
  dayOfMonth: number | null;
  timeOfDay: string;
  startDate: string;
  endDate: string | null;
}

/** Most candidate dates one search looks at (a bound on the work; real schedules need a handful). */
const SEARCH_MAX = 2000;

/**
 * The first occurrence of the schedule at or after `notBefore` (an instant),
 * or null when the schedule ends (endDate) before one. Occurrences start on
 * startDate and repeat every `interval` days, weeks (on `daysOfWeek`), months
 * (on `dayOfMonth`, the month's last day when it is shorter) or years (on
 * startDate's month and day; 29 February falls on the 28th in other years).
 */
export function firstOccurrence(s: Schedule, tz: string, notBefore: number): number | null {
  const start = dayOf(s.startDate)!;
  const end = s.endDate === null ? Infinity : dayOf(s.endDate)!;
  const minute = minuteOf(s.timeOfDay);
  const from = Math.max(start, localDay(notBefore, tz) - 1);
  const n = Math.max(1, s.interval);
  let looked = 0;
  const check = (day: number): number | null | undefined => {
    if (day < start || day < from) return undefined;
    if (day > end) return null;
    const at = zonedInstant(day, minute, tz);
    return at >= notBefore ? at : undefined;
  };
  switch (s.frequency) {
    case 'daily': {
      for (let k = Math.max(0, Math.floor((from - start) / n)); looked++ < SEARCH_MAX; k++) {
        const r = check(start + k * n);
        if (r !== undefined) return r;
      }
      return null;
    }
    case 'weekly': {
      const monday = start - weekdayOf(start);
      const days = (s.daysOfWeek?.length ? s.daysOfWeek : [WEEKDAYS[weekdayOf(start)]!]).map((d) => WEEKDAYS.indexOf(d as (typeof WEEKDAYS)[number])).sort((a, b) => a - b);
      for (let w = Math.max(0, Math.floor(Math.floor((from - monday) / 7) / n) * n); looked++ < SEARCH_MAX; w += n) {
        for (const d of days) {
          const r = check(monday + w * 7 + d);
          if (r !== undefined) return r;
        }
      }
      return null;
    }
    case 'monthly': {
      const s0 = ymd(start);
      const f0 = ymd(from);
      const first = s0.y * 12 + s0.m;
      const want = s.dayOfMonth ?? s0.d;
      for (let k = Math.max(0, Math.floor((f0.y * 12 + f0.m - first) / n)); looked++ < SEARCH_MAX; k++) {
        const mm = first + k * n;
        const y = Math.floor(mm / 12);
        const m = mm % 12;
        const r = check(Date.UTC(y, m, Math.min(want, daysInMonth(y, m))) / DAY_MS);
        if (r !== undefined) return r;
      }
      return null;
    }
    case 'yearly': {
      const s0 = ymd(start);
      const f0 = ymd(from);
      for (let k = Math.max(0, Math.floor((f0.y - s0.y) / n)); looked++ < SEARCH_MAX; k++) {
        const y = s0.y + k * n;
        const r = check(Date.UTC(y, s0.m, Math.min(s0.d, daysInMonth(y, s0.m))) / DAY_MS);
        if (r !== undefined) return r;
      }
      return null;
    }
  }
}

/**
 * The next run of a rule as stored: null while paused or once `count`
 * occurrences were created; else the first occurrence at or after
 * `notBefore` and strictly after the last one fired.
 */
export function nextRunOf(rule: Schedule & { active: boolean; count: number | null; occurrences: number; lastRunAt: number | null }, tz: string, notBefore: number): number | null {
  if (!rule.active) return null;
  if (rule.count !== null && rule.occurrences >= rule.count) return null;
  return firstOccurrence(rule, tz, rule.lastRunAt === null ? notBefore : Math.max(notBefore, rule.lastRunAt + 1));
}

const dateSchema = z.string().refine((s) => dayOf(s) !== undefined, { message: 'must be a calendar date YYYY-MM-DD (1970 or later)', params: { code: 'invalid_date' } });
const timeSchema = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time of day HH:MM (24-hour)');
const daysSchema = z.array(z.enum(WEEKDAYS)).min(1, 'must name at least one day').max(7, 'must name at most 7 days');

/** The fields whose change moves the schedule (and so nextRunAt). */
const SCHEDULE_FIELDS = ['frequency', 'interval', 'daysOfWeek', 'dayOfMonth', 'timeOfDay', 'startDate', 'endDate', 'count', 'active'] as const;

/** Recurring rules (`/recurring-rules`): hard-deleted; tasks and lists made from a rule keep living with recurringRuleId null. */
export const recurringRuleResource = defineResource({
  name: 'recurringRule',
  path: 'recurring-rules',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    // The template of each task an occurrence creates.
    name: f.string({ trim: true, min: 1, max: 1024, required: true }),
    description: f.string({ max: 1_000_000, nullable: true }),
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
      input.actorId = ctx.ids.uuid();
      const actors = ctx.registry.get('actor');
      await ctx.repo.insert(actors, ctx.teamId, {
        id: input.actorId, type: 'recurringTask', displayName: `Recurring: ${input.name!}`.slice(0, 255), memberId: null, agentId: null, tombstonedAt: null,
        createdAt: ctx.now, updatedAt: ctx.now, createdByActorId: null, updatedByActorId: null, createdByActorType: null, updatedByActorType: null,
      });
    },
    async beforeUpdate(ctx, current, patch) {
      if ('name' in patch) rejectPromotional('name', patch.name);
      await sameProject(ctx, current.projectId, patch);
      if (!SCHEDULE_FIELDS.some((k) => k in patch)) return;
      const merged = { ...current, ...patch };
      shapeSchedule(merged, patch, patch);
      const tz = await workspaceTimezone(ctx.repo, ctx.teamId);
      patch.nextRunAt = nextRunOf({ ...current, ...patch } as ScheduleRec, tz, ctx.now);
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

type ScheduleRec = Schedule & { active: boolean; count: number | null; occurrences: number; lastRunAt: number | null };

/** listId and statusId must belong to the rule's project (as for tasks). */
async function sameProject(ctx: WriteContext, projectId: string, input: Record<string, unknown>) {
  for (const [field, res] of [['statusId', 'status'], ['listId', 'list']] as const) {
    if (typeof input[field] === 'string') {
      const r: Rec = await ctx.mustGet(res, input[field] as string, field);
      if (r.projectId !== projectId) throw fieldError(field, 'wrong_project', `the ${res} belongs to another project`);
    }
  }
}

/**
 * The per-frequency fields: `daysOfWeek` belongs to weekly rules (default the
 * weekday of startDate), `dayOfMonth` to monthly ones (default startDate's
 * day). Sent for another frequency they are refused (`not_applicable`); a
 * frequency change clears the one that no longer applies. endDate may not
 * precede startDate, and endDate and count do not go together.
 */
function shapeSchedule(merged: Record<string, unknown>, sent: Record<string, unknown>, out: Record<string, unknown>) {
  const freq = merged.frequency as Frequency;
  const start = dayOf(merged.startDate as string)!;
  if (freq === 'weekly') {
    if (merged.daysOfWeek == null) out.daysOfWeek = [WEEKDAYS[weekdayOf(start)]];
    else out.daysOfWeek = [...new Set(merged.daysOfWeek as string[])].sort((a, b) => WEEKDAYS.indexOf(a as never) - WEEKDAYS.indexOf(b as never));
  } else {
    if (sent.daysOfWeek != null) throw fieldError('daysOfWeek', 'not_applicable', 'daysOfWeek applies to weekly rules only');
    out.daysOfWeek = null;
  }
  if (freq === 'monthly') {
    if (merged.dayOfMonth == null) out.dayOfMonth = Number((merged.startDate as string).slice(8, 10));
  } else {
    if (sent.dayOfMonth != null) throw fieldError('dayOfMonth', 'not_applicable', 'dayOfMonth applies to monthly rules only');
    out.dayOfMonth = null;
  }
  if (typeof merged.endDate === 'string' && dayOf(merged.endDate)! < start) throw fieldError('endDate', 'before_start', 'endDate must not be before startDate');
  if (merged.endDate != null && merged.count != null) {
    throw fieldError(sent.count != null ? 'count' : 'endDate', 'exclusive', 'a rule ends either on endDate or after count occurrences, not both');
  }
}
