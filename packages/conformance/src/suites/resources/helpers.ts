import { expect } from 'vitest';
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

/** Assert a status (showing the body when it differs) and return the body. */
export function expectOk(r: Reply, status = 200): any {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

/** Assert a problem response: status and code, and that its `type` is the code; returns the body. */
export function expectProblem(r: Reply, status: number, code: string): any {
  expect({ status: r.status, code: r.body?.code }, JSON.stringify(r.body)).toEqual({ status, code });
  expect(r.body.type).toBe(code);
  return r.body;
}

/** A 400 validation_failed naming `field` (and, when given, its per-field `fieldCode`). */
export function expectInvalid(r: Reply, field: string, fieldCode?: string): void {
  const b = expectProblem(r, 400, 'validation_failed');
  expect(Array.isArray(b.errors), JSON.stringify(b)).toBe(true);
  const e = b.errors.find((x: any) => x.field === field);
  expect(e, JSON.stringify(b.errors)).toBeDefined();
  if (fieldCode) expect(e.code, JSON.stringify(b.errors)).toBe(fieldCode);
}
