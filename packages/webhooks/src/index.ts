export {
  createWebhookSender, isPublicAddress, redactAddresses, shortError, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_RESPONSE_BYTES, ERROR_MAX_BYTES,
  type WebhookSenderOptions, type ClosableWebhookSender, type HostLookup, type ResolvedAddress,
} from './sender';
export { createUrlFetcher, FETCH_USER_AGENT, type UrlFetcherOptions, type ClosableUrlFetcher } from './fetcher';
export {
  createWebhookWorker, MAX_ATTEMPTS, BACKOFF_MS, BACKOFF_JITTER, AUTO_DISABLE_AFTER, PAYLOAD_MAX_BYTES,
  DELIVERY_LOG_RETENTION_MS, FINISHED_JOB_RETENTION_MS, USER_AGENT,
  type WebhookWorker, type WebhookWorkerOptions, type RunResult,
} from './worker';
export { verifyWebhookSignature, signWebhook, SIGNATURE_TOLERANCE_SECONDS } from '@pmapi/core';
export type { WebhookSender, WebhookRequest, WebhookAttempt } from '@pmapi/core';
