import { ProblemError } from '../errors/problem';
import type { WriteContext } from './hooks';

/** The colour palette new portfolios, projects, lists and statuses draw from. */
export const PALETTE = [
  '#4f46e5', '#0ea5e9', '#10b981', '#f59e0b', '#ef4444', '#8b5cf6',
  '#ec4899', '#14b8a6', '#f97316', '#6366f1', '#84cc16', '#64748b',
] as const;

export function paletteColor(ctx: WriteContext): string {
  return PALETTE[Math.floor(ctx.ids.random() * PALETTE.length) % PALETTE.length]!;
}

/** secondaryColor: the colour mixed 80 % toward white (a tint for backgrounds). */
export function secondaryOf(color: string): string {
  const n = parseInt(color.slice(1), 16);
  const mix = (c: number) => Math.round(c + (255 - c) * 0.8);
  const r = mix((n >> 16) & 255);
  const g = mix((n >> 8) & 255);
  const b = mix(n & 255);
  return `#${[r, g, b].map((x) => x.toString(16).padStart(2, '0')).join('')}`;
}

/** `#RGB` or `#RRGGBB` → lowercase `#rrggbb`. */
export function normaliseColor(c: string): string {
  const h = c.slice(1).toLowerCase();
  return h.length === 3 ? `#${h[0]}${h[0]}${h[1]}${h[1]}${h[2]}${h[2]}` : `#${h}`;
}

/** Up to three initials: first letters of the first three words, or the first two letters of a single word. */
export function initialsOf(name: string): string {
  const words = name.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  if (words.length === 0) return '?';
  if (words.length === 1) return [...words[0]!].slice(0, 2).join('').toUpperCase();
  return words.slice(0, 3).map((w) => [...w][0]!).join('').toUpperCase();
}

const PROMO = /\b(viagra|cialis|casino|crypto giveaway|free money|click here to (win|claim)|limited time offer|buy now|earn \$\d+)\b/i;
const URL_RE = /https?:\/\/\S+/gi;

/** Spam-like or promotional content: marketing phrases, or three or more links in a name. */
export function looksPromotional(s: string): boolean {
  return PROMO.test(s) || (s.match(URL_RE)?.length ?? 0) >= 3;
}

export function rejectPromotional(field: string, value: unknown): void {
  if (typeof value === 'string' && looksPromotional(value)) {
    throw new ProblemError('validation_failed', `${field} looks like spam or promotional content`, {
      errors: [{ field, code: 'promotional_content', message: 'looks like spam or promotional content' }],
    });
  }
}

export function fieldError(field: string, code: string, message: string): ProblemError {
  return new ProblemError('validation_failed', `${field}: ${message}`, { errors: [{ field, code, message }] });
}

/** Largest order among rows matching `where`, plus `step` (first row: `step`). */
export async function nextOrder(ctx: WriteContext, resName: string, where: Record<string, unknown>, step: number): Promise<number> {
  const res = ctx.registry.get(resName);
  const m = await ctx.repo.max(res, ctx.teamId, 'order', where);
  return (m ?? 0) + step;
}

/**
 * `statusId` and `listId` in `input`, when sent as ids, must be live rows of
 * this workspace (404 `resource_not_found` naming the field) in `projectId`
 * (400 `wrong_project`): tasks and recurring rules.
 */
export async function sameProject(ctx: WriteContext, projectId: string, input: Record<string, unknown>): Promise<void> {
  for (const [field, res] of [['statusId', 'status'], ['listId', 'list']] as const) {
    if (typeof input[field] === 'string') {
      const r = await ctx.mustGet(res, input[field] as string, field);
      if (r.projectId !== projectId) throw fieldError(field, 'wrong_project', `the ${res} belongs to another project`);
    }
  }
}
