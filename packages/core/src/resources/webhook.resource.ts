import { z } from 'zod';
import { validationError } from '../errors/problem';
import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import { eventCatalog } from '../webhooks/catalog';
import { patternErrors } from '../webhooks/patterns';
import { webhookUrlProblem } from '../webhooks/hosts';
import { webhookRuntime } from '../webhooks/runtime';
import type { WriteContext } from './hooks';

export const WEBHOOK_API_VERSIONS = ['latest', '2026-03-20'] as const;
export const WEBHOOK_NAME_MAX = 255;

/** A fresh signing secret: `whsec_` and 32 base62 characters (~190 bits). */
export function newWebhookSecret(ctx: { ids: { secret(n: number): string } }): string {
  return `whsec_${ctx.ids.secret(32)}`;
}

// Loopback URLs pass the declaration's check; the hooks refuse them unless this API allows them (checkUrl).
const urlSchema = z.string().superRefine((v, c) => {
  const p = webhookUrlProblem(v, { allowLoopback: true });
  if (p) c.addIssue({ code: 'custom', message: p.message, params: { reason: p.code } });
});

/** A loopback receiver only when this API opted in to local webhook development (issue 16); else the usual refusal. */
function checkUrl(ctx: WriteContext, url: unknown): void {
  if (typeof url !== 'string' || webhookRuntime(ctx.registry)?.allowLoopback) return;
  const p = webhookUrlProblem(url);
  if (p) throw validationError([{ field: 'url', code: 'custom', message: p.message }]);
}

function checkEvents(ctx: WriteContext, events: unknown): void {
  const errors = patternErrors(events as string[], eventCatalog(ctx.registry));
  if (errors.length) throw validationError(errors);
}

/**
 * Webhook registrations (spec "Webhook"): workspace-scoped, soft-deleted.
 * The secret is write-only: generated at create, returned by the create
 * answer alone (an Idempotency-Key replay gets the webhook without it) and by
 * rotate-secret (routes/webhooks.ts); never in reads or event payloads.
 */
export const webhookResource = defineResource({
  name: 'webhook',
  // Spec Webhook endpoints: manageWebhooks for create, update, delete and restore; reading needs only membership.
  policy: { client: ['read'], requires: { write: ['manageWebhooks'], delete: ['manageWebhooks'] } },
  path: 'webhooks',
  softDelete: true,
  fields: {
    name: f.string({ max: WEBHOOK_NAME_MAX, nullable: true }),
    url: f.text(urlSchema, { required: true }),
    // Element rules (count, length, wildcards, catalog) are checked by the hooks against the registry's catalog.
    events: f.json(z.array(z.string())),
    apiVersion: f.enum(WEBHOOK_API_VERSIONS),
    active: f.boolean(),
    failCount: f.readOnly('integer'),
    secret: f.readOnly('text', { writeOnly: true }),
    lastDeliveredAt: f.readOnly('timestamp', { nullable: true }),
    createdById: f.readOnly('text'),
  },
  filters: {
    purgeAt: { ops: ['null', 'notNull', ...RANGE] },
    name: { ops: ['eq', 'contains', 'startsWith'] },
    active: { ops: ['eq'] },
    createdAt: { ops: RANGE },
  },
  defaultSort: '-createdAt',
  expand: {
    createdBy: { kind: 'one', target: 'member', field: 'createdById' },
  },
  hooks: {
    beforeCreate(ctx, input) {
      checkUrl(ctx, input.url);
      input.events ??= [];
      checkEvents(ctx, input.events);
      input.apiVersion ??= 'latest';
      input.active ??= true;
      input.failCount = 0;
      input.lastDeliveredAt = null;
      input.secret = newWebhookSecret(ctx);
      input.createdById = ctx.principal.memberId;
    },
    beforeUpdate(ctx, current, patch) {
      if (patch.url !== undefined) checkUrl(ctx, patch.url);
      if (patch.events !== undefined) checkEvents(ctx, patch.events);
      // Re-enabling (spec "Delivery semantics" rule 9) starts the failure count afresh.
      if (patch.active === true && current.active === false) patch.failCount = 0;
    },
    reveal(_ctx, rec) {
      return { secret: rec.secret };
    },
  },
});
