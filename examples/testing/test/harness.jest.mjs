// jest with the built @pmapi/testing, in jest's native ESM mode (run: node --experimental-vm-modules node_modules/jest/bin/jest.js, or NODE_OPTIONS=--experimental-vm-modules npx jest).
// The three lines, as in the vitest and node:test examples: jest's globals, nothing jest-specific in the harness.
import { createTestApi } from '@pmapi/testing';

test('an owner creates a project', async () => {
  const t = await createTestApi();
  expect((await t.as(t.a.owner).post('/projects', { name: 'Launch' })).status).toBe(201);
  await t.close();
});

describe('one harness per file', () => {
  let t;
  beforeAll(async () => {
    t = await createTestApi();
  });
  afterAll(() => t.close());

  test('a reminder fires when time is moved past it, and a webhook delivery is captured', async () => {
    const owner = t.as(t.a.owner);
    await owner.post('/webhooks', { url: 'https://example.com/hooks', events: ['task.created'] });
    const p = await owner.post('/projects', { name: 'Jest' });
    const task = await owner.post('/tasks', { name: 'Call back', projectId: p.body.id });
    await owner.post('/reminders', { taskId: task.body.id, date: new Date(t.clock.now() + 3_600_000).toISOString() });
    await t.advance('1h');
    const run = await t.runJobs();
    expect(run.reminders.fired).toBe(1);
    expect(t.deliveries.map((d) => d.headers['x-webhook-event'])).toEqual(['task.created']);
  });
});
