export { signWebhook, verifyWebhookSignature, SIGNATURE_TOLERANCE_SECONDS } from './sign';

/** One HTTP attempt at a webhook endpoint, as the delivery side sees it. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  /** The exact bytes that were signed. */
  body: string;
}

/** The outcome of one attempt (spec "Delivery semantics" rule 2: any 2xx succeeds). */
export interface WebhookAttempt {
  ok: boolean;
  /** HTTP status, or null when no response arrived. */
  status: number | null;
  durationMs: number;
  /** A short reason on failure (at most 1 KiB), null on success. */
  error: string | null;
}

/** Sends one signed request (implemented with undici and SSRF checks by @pmapi/webhooks). */
export type WebhookSender = (req: WebhookRequest) => Promise<WebhookAttempt>;
export { eventCatalog, LIFECYCLE_RESOURCES, LIFECYCLE_ACTIONS, SPEC_RELATIONS, NOT_SHOWN_RELATIONS, OPERATION_EVENTS, type EventCatalog } from './catalog';
export { matches, matchesAny, patternErrors, assertPatterns, PATTERNS_MAX, PATTERN_LENGTH_MAX, PATTERN_WILDCARDS_MAX } from './patterns';
export { isForbiddenHostLiteral, isLoopbackHost, isLoopbackWebhookUrl, webhookUrlProblem, WEBHOOK_URL_MAX } from './hosts';
export { classifyAddress, isPublicAddress, isIpLiteral, REFUSED_TARGET_MESSAGE, type AddressClass } from './address-policy';
