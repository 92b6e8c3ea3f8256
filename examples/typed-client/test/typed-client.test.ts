import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { startQuickstart, type Seed } from '../../quickstart/test/start';
import { createProject, createTask, findProject, listProjects, openTasksWithProject, pmapiClient, PmapiProblem } from '../src/client';

const dir = fileURLToPath(new URL('..', import.meta.url));

// Issue 17: a typed client generated from the OpenAPI document (openapi-typescript) calling the quickstart through
// openapi-fetch; the committed types match the served document; the types refuse wrong calls.
describe('example: typed client (openapi-typescript + openapi-fetch)', () => {
  let child: ChildProcess;
  let seed: Seed;
  let api: string;
  let tmp: string;
  let generated: Promise<string>;
  const token = (team: number, role: string) => seed.teams[team]!.members.find((m) => m.role === role)!.token;

  beforeAll(async () => {
    ({ child, seed } = await startQuickstart());
    api = `${seed.baseUrl}/api/v3`;
    tmp = mkdtempSync(join(tmpdir(), 'pmapi-typed-client-'));
    // What `pnpm generate` does, against this server, into a temporary file (compared with the committed one below).
    const out = join(tmp, 'pmapi.d.ts');
    generated = promisify(execFile)(process.execPath, ['scripts/generate.mjs', '--url', `${api}/openapi.json`, '--out', out], { cwd: dir, timeout: 60_000 })
      .then(() => readFileSync(out, 'utf8'));
    generated.catch(() => undefined); // awaited (and reported) by the drift test
  });
  afterAll(() => {
    child?.kill('SIGTERM');
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('lists projects, creates a project and tasks, lists open tasks with filters and expand=project', async () => {
    const client = pmapiClient(api, token(0, 'owner'));
    const before = await listProjects(client);

    const project = await createProject(client, { name: 'Typed launch', accessType: 'workspace' }, 'typed-launch-1');
    expect(project).toMatchObject({ name: 'Typed launch', accessType: 'workspace', archived: false });
    // The same idempotency key replays the first answer: no second project.
    expect((await createProject(client, { name: 'Typed launch', accessType: 'workspace' }, 'typed-launch-1')).id).toBe(project.id);
    const after = await listProjects(client);
    expect(after.map((p) => p.id)).toContain(project.id);
    expect(after).toHaveLength(before.length + 1);

    const readme = await createTask(client, { projectId: project.id, name: 'Write the README', dueAt: '2030-01-15T09:00:00.000Z', storyPoints: 2 });
    expect(readme).toMatchObject({ projectId: project.id, name: 'Write the README', dueAt: '2030-01-15T09:00:00.000Z', storyPoints: 2, completed: false });
    const ship = await createTask(client, { projectId: project.id, name: 'Ship it' });
    const done = await createTask(client, { projectId: project.id, name: 'Write the plan', completed: true });
    expect(done.completed).toBe(true);

    const open = await openTasksWithProject(client, project.id);
    expect(open.map((t) => t.id)).toEqual([readme.id, ship.id]);
    // expand=project: the record in place, typed as Project.
    for (const t of open) expect(t.project).toMatchObject({ id: project.id, name: 'Typed launch' });
    expect((await openTasksWithProject(client, project.id, 'README')).map((t) => t.id)).toEqual([readme.id]);
    expect(await openTasksWithProject(client, project.id, 'nothing like this')).toEqual([]);
  });

  it('a 404 is a typed problem: findProject answers undefined, also for another workspace\'s project', async () => {
    const acme = pmapiClient(api, token(0, 'owner'));
    const globex = pmapiClient(api, token(1, 'owner'));
    const project = await createProject(acme, { name: 'Acme only' });
    expect(await findProject(acme, project.id)).toMatchObject({ id: project.id, name: 'Acme only' });
    expect(await findProject(acme, 'noSuchProject1')).toBeUndefined();
    expect(await findProject(globex, project.id)).toBeUndefined();

    // The raw answer: error is the Problem body, data is absent.
    const { data, error, response } = await acme.GET('/projects/{id}', { params: { path: { id: 'noSuchProject1' } } });
    expect(response.status).toBe(404);
    expect(data).toBeUndefined();
    expect(error).toMatchObject({ status: 404, code: 'resource_not_found', type: 'resource_not_found' });
  });

  it('other problems throw PmapiProblem with the typed body (401, 400 validation_failed with field errors)', async () => {
    const stranger = pmapiClient(api, 'svc_user_not_a_real_token');
    const unauthorized = await listProjects(stranger).catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(PmapiProblem);
    expect((unauthorized as PmapiProblem).problem.status).toBe(401);

    const invalid = await createProject(pmapiClient(api, token(0, 'owner')), { name: '' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(PmapiProblem);
    const { problem } = invalid as PmapiProblem;
    expect(problem).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(problem.errors?.map((e) => e.field)).toContain('name');
  });

  it('the generated types refuse wrong calls (test/fixtures/wrong-usage.ts, each line for its own reason)', () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(dir, 'tsconfig.json'), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    })!;
    const fixture = resolve(dir, 'test/fixtures/wrong-usage.ts');
    expect(config.fileNames.map((f) => resolve(f))).toEqual(expect.arrayContaining([fixture, resolve(dir, 'src/client.ts'), resolve(dir, 'src/pmapi.d.ts')]));
    // The fixture without its directives: each of their lines must fail with the reason the directive names, and
    // nothing else may (so the client and the rest of the fixture compile). One program: the generated file is big.
    const lines = readFileSync(fixture, 'utf8').split('\n');
    const expected = new Map<number, string>();
    const stripped = lines.map((l, i) => {
      const m = /\/\/ @ts-expect-error \[(.+)\]\s*$/.exec(l);
      if (!m) return l;
      expected.set(i + 1, m[1]!);
      return l.replace(/\/\/ @ts-expect-error.*$/, '//');
    });
    expect(expected.size).toBeGreaterThanOrEqual(12);
    const host = ts.createCompilerHost(config.options);
    const read = host.readFile.bind(host);
    host.readFile = (f) => (resolve(f) === fixture ? stripped.join('\n') : read(f));
    const diagnostics = ts.getPreEmitDiagnostics(ts.createProgram({ rootNames: config.fileNames, options: config.options, host }));
    const show = (ds: readonly ts.Diagnostic[]) => ds.map((d) => `${d.file?.fileName}:${d.file ? d.file.getLineAndCharacterOfPosition(d.start!).line + 1 : '?'} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`).join('\n');
    const inFixture = diagnostics.filter((d) => d.file && resolve(d.file.fileName) === fixture);
    expect(show(diagnostics.filter((d) => !inFixture.includes(d)))).toBe('');
    const byLine = new Map<number, string[]>();
    for (const d of inFixture) {
      const line = d.file!.getLineAndCharacterOfPosition(d.start!).line;
      byLine.set(line, [...(byLine.get(line) ?? []), ts.flattenDiagnosticMessageText(d.messageText, ' ')]);
    }
    expect([...byLine.keys()].sort((a, b) => a - b)).toEqual([...expected.keys()].sort((a, b) => a - b));
    for (const [line, text] of expected) {
      expect(byLine.get(line)!.some((m) => m.includes(text)), `line ${line + 1} (${lines[line]!.trim()}): ${byLine.get(line)!.join(' | ')}`).toBe(true);
    }
  }, 60_000);

  // Last, so the generation (a child process, started in beforeAll) overlaps the compile above.
  it('src/pmapi.d.ts is what openapi-typescript makes of the served document (regenerate when this fails)', async () => {
    const fresh = await generated;
    expect(fresh).toMatch(/export interface paths \{/);
    const committed = readFileSync(join(dir, 'src/pmapi.d.ts'), 'utf8');
    if (fresh !== committed) {
      expect.fail('examples/typed-client/src/pmapi.d.ts is stale: the served OpenAPI document changed. Run `pnpm --filter @pmapi/example-typed-client generate` and commit the file.');
    }
  }, 60_000);
});
