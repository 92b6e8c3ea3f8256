import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { startQuickstart, type Seed } from './start';

/** The quickstart contract scripts rely on: `--port 0 --json` prints one JSON line once listening. */
describe('quickstart (examples/quickstart): pnpm start --port 0 --json', () => {
  let child: ChildProcess;
  let seed: Seed;
  let stdout: () => string;

  beforeAll(async () => {
    const started = await startQuickstart();
    child = started.child;
    seed = started.seed;
    stdout = started.stdout;
  });
  afterAll(() => {
    child?.kill('SIGTERM');
  });

  const call = (path: string, token: string, init: RequestInit = {}) =>
    fetch(`${seed.baseUrl}/api/v3${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });

  it('prints exactly one line of JSON of the documented shape', async () => {
    await new Promise((r) => setTimeout(r, 100));
    expect(stdout().trim().split('\n')).toHaveLength(1);
    expect(seed.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(seed.teams).toHaveLength(2);
    expect(seed.teams[0]!.members.map((m) => m.role)).toEqual(['owner', 'regular', 'client']);
    expect(seed.teams[1]!.members.map((m) => m.role)).toEqual(['owner']);
    for (const t of seed.teams) for (const m of t.members) expect(m.token).toMatch(/^svc_user_[0-9A-Za-z]+_[0-9A-Za-z]+$/);
  });

  it('serves v3 over HTTP with the seeded tokens, isolated per workspace', async () => {
    const [acme, globex] = seed.teams;
    const owner = acme!.members[0]!.token;
    // A limited project (the default) with the regular and the client member in it.
    const members = [acme!.members[1]!.id, acme!.members[2]!.id];
    const created = await call('/projects', owner, { method: 'POST', body: JSON.stringify({ name: 'Launch', members }) });
    expect(created.status).toBe(201);
    const project = (await created.json()) as { id: string };
    const task = await call('/tasks', acme!.members[1]!.token, { method: 'POST', body: JSON.stringify({ name: 'Ship it', projectId: project.id }) });
    expect(task.status).toBe(201);
    const list = await call(`/tasks?projectId=${project.id}`, acme!.members[2]!.token);
    expect(((await list.json()) as { data: unknown[] }).data).toHaveLength(1);
    const foreign = await call(`/projects/${project.id}`, globex!.members[0]!.token);
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { code: string }).code).toBe('resource_not_found');
  });
});
