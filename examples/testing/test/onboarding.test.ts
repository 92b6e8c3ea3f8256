import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { verifyWebhookSignature } from '@pmapi/core';
import { createTestApi, type TestApi } from '@pmapi/testing';
import { onboard } from '../src/onboarding';

// The host app's onboarding, tested against a real pmapi (in-memory SQLite, fake clock) from @pmapi/testing.
describe('example: testing an app with @pmapi/testing (vitest)', () => {
  let t: TestApi;
  beforeEach(async () => {
    t = await createTestApi();
  });
  afterEach(() => t.close());

  it('the three-line form: a member creates a project', async () => {
    const r = await t.as(t.a.owner).post('/projects', { name: 'Launch' });
    expect(r.status).toBe(201);
  });

  it('onboarding gives a new regular member their project, tasks and a reminder that fires tomorrow', async () => {
    const me = t.as(t.a.regular);
    const { projectId, taskIds } = await onboard(t.api, t.a.regular.token);
    const tasks = await me.get('/tasks', { query: { 'projectId[eq]': projectId } });
    expect(tasks.body.data.map((x: { id: string }) => x.id).sort()).toEqual([...taskIds].sort());
    // The reminder fires a day later, not before.
    await t.advance('23h');
    expect((await t.runJobs()).reminders.fired).toBe(0);
    await t.advance('1h');
    expect((await t.runJobs()).reminders.fired).toBe(1);
    // Workspace B sees none of it.
    expect((await t.as(t.b.owner).get(`/projects/${projectId}`)).status).toBe(404);
  });

  it('onboarding as a client fails with the API\'s permission error', async () => {
    await expect(onboard(t.api, t.a.client.token)).rejects.toThrow(/answered 403/);
  });

  it('a webhook subscriber is told about the onboarding project, signed (captured, no network)', async () => {
    const hook = await t.as(t.a.owner).post('/webhooks', { url: 'https://example.com/hooks', events: ['project.created'] });
    await onboard(t.api, t.a.owner.token);
    await t.runJobs();
    expect(t.deliveries.map((d) => d.body.payload.project.name)).toEqual(['Getting started']);
    const d = t.deliveries[0]!;
    expect(verifyWebhookSignature(d.raw, d.headers['x-webhook-signature'], hook.body.secret, { now: t.clock.now() })).toBe(true);
  });

  it('onboarding stays within a statement budget', async () => {
    const sql = await t.countQueries(() => onboard(t.api, t.a.owner.token));
    expect(sql.length).toBeGreaterThan(0);
    expect(sql.length).toBeLessThan(200);
  });
});
