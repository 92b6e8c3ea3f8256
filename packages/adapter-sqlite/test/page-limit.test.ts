import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness } from '@pmapi/conformance';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

// Issue 11: SQLite's planner reads a bound LIMIT's value and marks the statement to be compiled again whenever that
// parameter is bound again, which better-sqlite3 does on every run: with `limit ?` a list's prepared statement was
// compiled anew on every request (a 50-task page: 590 µs a run against 400 µs with the number written in). The page
// size is written into the statement instead (dialect `inlineLimit`), one statement per size. That every size is
// still its own, one after another, is checked on both stores by the conformance query suite.
describe('SQLite: a page statement carries its LIMIT as a number, never a bound value (issue 11)', () => {
  const seen: string[] = [];
  let h: Harness;
  let projectId: string;
  beforeAll(async () => {
    h = await harness({ name: 'sqlite', open: () => openSqliteStore({ onQuery: (q) => seen.push(q) }) });
    projectId = (await h.project({ name: 'Limits' })).id;
    for (let i = 0; i < 4; i++) await h.task(projectId, { name: `t${i}` });
  });
  afterAll(() => h.close());

  const pageStatements = async (path: string) => {
    seen.length = 0;
    const r = await h.get(path);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return seen.filter((q) => /\blimit\b/i.test(q));
  };

  it('a list, its expand hops and a members list: the page size written in, nothing bound for it', async () => {
    for (const path of [`/tasks?projectId=${projectId}&limit=2`, `/tasks?projectId=${projectId}&limit=3&expand=assignees,status,project`, '/members?limit=2']) {
      const statements = await pageStatements(path);
      expect(statements.length, path).toBeGreaterThan(0);
      for (const q of statements) {
        expect(q, path).not.toMatch(/\blimit \?/i);
        expect(q, path).toMatch(/\blimit \d+\b/i);
      }
    }
  });

  it('the same size runs the same statement text (prepared once); another size another one', async () => {
    const [a] = await pageStatements(`/tasks?projectId=${projectId}&limit=2`);
    const [b] = await pageStatements(`/tasks?projectId=${projectId}&limit=2`);
    const [c] = await pageStatements(`/tasks?projectId=${projectId}&limit=3`);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(c!.replace(/\blimit \d+/i, '')).toBe(a!.replace(/\blimit \d+/i, ''));
  });
});
