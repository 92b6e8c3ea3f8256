const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * A span of time in milliseconds: a number of ms, or text such as `'90s'`,
 * `'5m'`, `'2h'`, `'31d'`, `'1w'`, `'1h30m'` (units ms, s, m, h, d, w).
 *
 * @example parseDuration('1h30m') // 5_400_000
 */
export function parseDuration(span: number | string): number {
  if (typeof span === 'number') {
    if (!Number.isFinite(span) || span < 0) throw new RangeError(`@pmapi/testing: a duration must be a finite number of ms >= 0 (got ${span})`);
    return span;
  }
  const text = String(span).trim();
  const part = /\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*/gy;
  let total = 0;
  let at = 0;
  let m: RegExpExecArray | null;
  part.lastIndex = 0;
  while (at < text.length && (m = part.exec(text)) !== null) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    at = part.lastIndex;
  }
  if (text.length === 0 || at !== text.length) {
    throw new RangeError(`@pmapi/testing: cannot read the duration '${span}' (use ms or text like '90s', '5m', '2h', '31d', '1h30m')`);
  }
  return Math.round(total);
}
