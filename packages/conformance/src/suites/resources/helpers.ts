import type { Reply } from '../../kit';

/** Small helpers shared by the per-resource suites (formerly the top of suites/resources.ts). */

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const HEX6_LOWER = /^#[0-9a-f]{6}$/;
export const HEX6 = /^#[0-9A-Fa-f]{6}$/;
export const DAY = 24 * 60 * 60 * 1000;

/** Status and code of a reply, compared together so a failure shows both. */
export function problem(r: Reply): { status: number; code: unknown } {
  return { status: r.status, code: r.body?.code };
}

/** The `errors[].field` names of a validation problem. */
export function fieldsOf(r: Reply): string[] {
  return ((r.body?.errors ?? []) as Array<{ field: string }>).map((e) => e.field);
}

export function codesOf(r: Reply): string[] {
  return ((r.body?.errors ?? []) as Array<{ code: string }>).map((e) => e.code);
}

export const sorted = (xs: string[]) => [...xs].sort();

/** secondaryColor as docs/not-shown.md defines it: the colour mixed 80 % toward white. */
export function tint(color: string): string {
  const n = parseInt(color.slice(1), 16);
  const mix = (c: number) => Math.round(c + (255 - c) * 0.8);
  return `#${[(n >> 16) & 255, (n >> 8) & 255, n & 255].map((c) => mix(c).toString(16).padStart(2, '0')).join('')}`;
}

export const iso = (ms: number) => new Date(ms).toISOString();
