import { validationError, type FieldError } from '../errors/problem';
import type { EventCatalog } from './catalog';

/** Spec "Subscribing" rule 1 and "Limits". */
export const PATTERNS_MAX = 100;
export const PATTERN_LENGTH_MAX = 128;
export const PATTERN_WILDCARDS_MAX = 4;

/**
 * Does one pattern match an event name? `*` alone matches every event; inside
 * a pattern a `*` segment matches exactly one dot-segment. A segment that only
 * contains `*` among other characters (`task.up*`) is literal, so it matches
 * no catalog name (docs/not-shown.md "Webhooks").
 */
export function matches(pattern: string, eventName: string): boolean {
  if (pattern === '*') return true;
  const p = pattern.split('.');
  const e = eventName.split('.');
  if (p.length !== e.length) return false;
  for (let i = 0; i < p.length; i++) if (p[i] !== '*' && p[i] !== e[i]) return false;
  return true;
}

export function matchesAny(patterns: readonly string[], eventName: string): boolean {
  for (const p of patterns) if (matches(p, eventName)) return true;
  return false;
}

/** Field errors of a subscription list (rules 1-3), reported under `field` (`events`, `events.3`). */
export function patternErrors(entries: readonly string[], catalog: EventCatalog, field = 'events'): FieldError[] {
  const errors: FieldError[] = [];
  if (entries.length > PATTERNS_MAX) {
    errors.push({ field, code: 'too_many_entries', message: `at most ${PATTERNS_MAX} entries` });
    return errors;
  }
  entries.forEach((e, i) => {
    const at = `${field}.${i}`;
    if (e.length === 0) errors.push({ field: at, code: 'empty_pattern', message: 'must not be empty' });
    else if (e.length > PATTERN_LENGTH_MAX) errors.push({ field: at, code: 'pattern_too_long', message: `at most ${PATTERN_LENGTH_MAX} characters` });
    else if (e.includes(',')) errors.push({ field: at, code: 'pattern_has_comma', message: 'must not contain a comma; send one pattern per entry' });
    else if ((e.match(/\*/g) ?? []).length > PATTERN_WILDCARDS_MAX) {
      errors.push({ field: at, code: 'too_many_wildcards', message: `at most ${PATTERN_WILDCARDS_MAX} wildcards` });
    } else if (e.includes('*') ? !catalog.all.some((n) => matches(e, n)) : !catalog.has(e)) {
      errors.push({
        field: at, code: 'unknown_event',
        message: e.includes('*') ? `'${e}' matches no event of the catalog` : `'${e}' is not an event of the catalog`,
      });
    }
  });
  return errors;
}

/** Throw 400 validation_failed unless every entry is valid. */
export function assertPatterns(entries: readonly string[], catalog: EventCatalog, field = 'events'): void {
  const errors = patternErrors(entries, catalog, field);
  if (errors.length) throw validationError(errors);
}
