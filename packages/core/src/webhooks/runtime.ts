import type { Registry } from '../resources/registry';
import type { PendingEvent, Principal } from '../services/context';
import type { WebhookSender } from './index';

/**
 * What the webhook routes need from the API instance beyond a request
 * context: the sender of test deliveries, and a way to record an event in a
 * transaction of its own (the test route sends outside any transaction).
 * Bound per instance, keyed by its registry.
 */
export interface WebhookRuntime {
  sender?: WebhookSender;
  /** Loopback receivers (http://localhost, 127.0.0.1, [::1]) may be registered (`createPmapi({ webhooks: { allowLoopback } })`). */
  allowLoopback?: boolean;
  publish(principal: Principal, events: PendingEvent[], now: number): Promise<void>;
}

const runtimes = new WeakMap<Registry, WebhookRuntime>();

export function bindWebhookRuntime(registry: Registry, runtime: WebhookRuntime): void {
  runtimes.set(registry, runtime);
}

export function webhookRuntime(registry: Registry): WebhookRuntime | undefined {
  return runtimes.get(registry);
}
