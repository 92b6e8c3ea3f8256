/*
 * Calendar and timezone arithmetic (one module for every use: recurring
 * rules, automatic milestones). Days are counted since 1970-01-01 (UTC
 * calendar); zones are IANA names, read with Intl; nothing here reads the
 * current time.
 */

export const DAY_MS = 24 * 60 * 60 * 1000;
export const MINUTE_MS = 60 * 1000;
/** The last year a date here may fall in: every instant up to the end of 9999 prints as a four-digit ISO 8601 year. */
export const LAST_YEAR = 9998;

/** `YYYY-MM-DD` → days since 1970-01-01; undefined when not a real calendar date (or before 1970, or after {@link LAST_YEAR}). */
export function dayOf(date: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return undefined;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (y < 1970 || y > LAST_YEAR || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo - 1)) return undefined;
  return Date.UTC(y, mo - 1, d) / DAY_MS;
}

/** Days since 1970-01-01 → `YYYY-MM-DD`. */
export function dateOf(day: number): string {
  const { y, m, d } = civil(day);
  return `${String(y).padStart(4, '0')}-${String(m + 1).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** Days since 1970-01-01 → year, month (0-11) and day of the month (Date.UTC's inverse, civil-from-days by H. Hinnant). */
export function civil(day: number): { y: number; m: number; d: number } {
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

/** Days since 1970-01-01 of year `y`, month `m` (0-11), day `d`. */
export function dayFrom(y: number, m: number, d: number): number {
  return Date.UTC(y, m, d) / DAY_MS;
}

/** Days in month `m` (0-11) of year `y`. */
export function daysInMonth(y: number, m: number): number {
  return [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m]!;
}

/** 0 = Monday … 6 = Sunday (1970-01-01 was a Thursday). */
export function weekdayOf(day: number): number {
  return (((day + 3) % 7) + 7) % 7;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** A usable IANA zone name: the one given, or UTC when there is none or an unknown one. */
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

/** Wall-clock time in `tz` at `instant`, as if it were UTC (ms). An unknown zone counts as UTC. */
export function wallClock(instant: number, tz: string): number {
  const fmt = formatters.get(usableZone(tz)) ?? formatters.get(usableZone('UTC'));
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
