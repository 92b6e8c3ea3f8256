// node:test with the built @pmapi/testing (run: node --test test/harness.node.mjs). The three lines are the first test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyWebhookSignature } from '@pmapi/core';
import { createTestApi } from '@pmapi/testing';

test('an owner creates a project', async () => {
  const t = await createTestApi();
  assert.equal((await t.as(t.a.owner).post('/projects', { name: 'Launch' })).status, 201);
  await t.close();
});

test('a client may not register a webhook; a trashed project is purged after 30 days; deliveries are captured', async (ctx) => {
  const t = await createTestApi();
  ctx.after(() => t.close());
  const owner = t.as(t.a.owner);
  assert.equal((await t.as(t.a.client).post('/webhooks', { url: 'https://example.com/hooks', events: ['project.*'] })).status, 403);
  const hook = await owner.post('/webhooks', { url: 'https://example.com/hooks', events: ['project.*'] });
  assert.equal(hook.status, 201);
  const p = await owner.post('/projects', { name: 'Old' });
  assert.equal((await owner.del(`/projects/${p.body.id}`)).status, 204);
  await t.advance('30d');
  const run = await t.runJobs();
  assert.ok(run.purge.purged >= 1);
  assert.equal((await owner.post(`/projects/${p.body.id}/restore`)).status, 404);
  const events = t.deliveries.map((d) => d.headers['x-webhook-event']);
  for (const e of ['project.created', 'project.removed', 'project.force_deleted']) assert.ok(events.includes(e), `${e} in ${events}`);
  for (const d of t.deliveries) assert.ok(verifyWebhookSignature(d.raw, d.headers['x-webhook-signature'], hook.body.secret, { now: d.at }));
});
