import { describe, it, expect } from 'vitest';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createWebhookSender, createWebhookWorker } from '@pmapi/webhooks';

// Issue 16 "Operable": typos are not accepted. createWebhookSender({ allowLoopBack: true }) was silently the
// default (loopback refused: the local-development opt-in looked broken); createWebhookWorker({ batchsize: 5 })
// kept 20. Refused naming the key, with a did-you-mean.
describe('webhooks: an unknown option is refused naming it (issue 16)', () => {
  it('createWebhookSender and createWebhookWorker refuse typos; documented options are accepted', async () => {
    expect(() => createWebhookSender({ allowLoopBack: true } as never)).toThrow(/^pmapi: createWebhookSender options\.allowLoopBack is not an option \(did you mean options\.allowLoopback\?\); known options: allowPrivateTargets, allowLoopback, /);
    expect(() => createWebhookSender({ verbose: true } as never)).toThrow(/^pmapi: createWebhookSender options\.verbose is not an option; known options/);
    const sender = createWebhookSender({ allowPrivateTargets: false, allowLoopback: true, timeoutMs: 1000, maxResponseBytes: 1024 });
    const store = await openSqliteStore();
    try {
      expect(() => createWebhookWorker({ store, sender, batchsize: 5 } as never)).toThrow(/^pmapi: createWebhookWorker options\.batchsize is not an option \(did you mean options\.batchSize\?\)/);
      const worker = createWebhookWorker({ store, sender, batchSize: 5, leaseMs: 1000, random: () => 0.5, onError: () => {} });
      expect((await worker.runOnce()).claimed).toBe(0);
    } finally {
      await sender.close();
      await store.close();
    }
  });
});
