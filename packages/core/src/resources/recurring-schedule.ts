import { z } from 'zod';
import { civil, dayFrom, dayOf, daysInMonth, LAST_YEAR, localDay, weekdayOf, zonedInstant } from '../clock/zone';
import { fieldError } from './rules';

/*
 * The schedule of a recurring rule (docs/not-shown.md "Recurring rules"):
 * its fields' rules and the calendar that turns them into instants in the
 * workspace timezone (clock/zone.ts does the zone arithmetic).
 */

export const RECURRING_FREQUENCIES = ['daily', 'weekly', 'monthly', 'yearly'] as const;
export type Frequency = (typeof RECURRING_FREQUENCIES)[number];
/** Days of the week, Monday first (ISO 8601 order). */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export const RECURRING_INTERVAL_MAX = 99;
export const RECURRING_COUNT_MAX = 1000;
export const RECURRING_DEFAULT_TIME = '09:00';

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
  // A rule ends with the last date timestamps print as ISO 8601 (4-digit years) at the latest.
  const end = Math.min(s.endDate === null ? Infinity : dayOf(s.endDate)!, LAST_DAY);
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
      const s0 = civil(start);
      const f0 = civil(from);
      const first = s0.y * 12 + s0.m;
      const want = s.dayOfMonth ?? s0.d;
      for (let k = Math.max(0, Math.floor((f0.y * 12 + f0.m - first) / n)); looked++ < SEARCH_MAX; k++) {
        const mm = first + k * n;
        const y = Math.floor(mm / 12);
        const m = mm % 12;
        const r = check(dayFrom(y, m, Math.min(want, daysInMonth(y, m))));
        if (r !== undefined) return r;
      }
      return null;
    }
    case 'yearly': {
      const s0 = civil(start);
      const f0 = civil(from);
      for (let k = Math.max(0, Math.floor((f0.y - s0.y) / n)); looked++ < SEARCH_MAX; k++) {
        const y = s0.y + k * n;
        const r = check(dayFrom(y, s0.m, Math.min(s0.d, daysInMonth(y, s0.m))));
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

export const dateSchema = z.string().refine((s) => dayOf(s) !== undefined, { message: `must be a calendar date YYYY-MM-DD (1970 to ${LAST_YEAR})`, params: { code: 'invalid_date' } });
export const timeSchema = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time of day HH:MM (24-hour)');
export const daysSchema = z.array(z.enum(WEEKDAYS)).min(1, 'must name at least one day').max(7, 'must name at most 7 days');

/** The fields whose change moves the schedule (and so nextRunAt). */
export const SCHEDULE_FIELDS = ['frequency', 'interval', 'daysOfWeek', 'dayOfMonth', 'timeOfDay', 'startDate', 'endDate', 'count', 'active'] as const;

const LAST_DAY = dayFrom(LAST_YEAR, 11, 31);

/** A rule's schedule and state as stored. */
export type ScheduleRec = Schedule & { active: boolean; count: number | null; occurrences: number; lastRunAt: number | null };

/** Whether `next` (the rule after a change) schedules differently from `current`. */
export function scheduleChanged(current: Record<string, unknown>, next: Record<string, unknown>): boolean {
  return SCHEDULE_FIELDS.some((k) => JSON.stringify(current[k] ?? null) !== JSON.stringify(next[k] ?? null));
}

/**
 * The per-frequency fields: `daysOfWeek` belongs to weekly rules (default the
 * weekday of startDate), `dayOfMonth` to monthly ones (default startDate's
 * day). Sent for another frequency they are refused (`not_applicable`); a
 * frequency change clears the one that no longer applies. endDate may not
 * precede startDate, and endDate and count do not go together.
 */
export function shapeSchedule(merged: Record<string, unknown>, sent: Record<string, unknown>, out: Record<string, unknown>) {
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
