import { describe, it, expect } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../../test/processes';

// The READMEs start the examples with `pnpm --filter <pkg> start -- --db pm.db …`; pnpm hands the script the `--`
// itself (`node dist/main.js -- --db pm.db`), which parseArgs took for a positional: "Unexpected argument '--db'",
// exit 1. A leading `--` is now skipped by the quickstart, examples/worker and examples/two-processes.
const dist = (p: string) => fileURLToPath(new URL(`../../${p}/dist/main.js`, import.meta.url));

/** Run a built example until it prints its first line (or exits); then stop it. */
async function firstLine(main: string, args: string[]): Promise<{ line: string; code: number | null; stderr: string }> {
  const r = await run(main, args, { stopAtFirstLine: true });
  return { line: r.stdout.split('\n')[0]!, code: r.code, stderr: r.stderr };
}

describe('examples take the arguments pnpm passes after `--` (README commands)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmapi-args-'));

  it('quickstart: -- --port 0 --json --db <file> starts and uses the file', async () => {
    const db = join(dir, 'q.db');
    const r = await firstLine(dist('quickstart'), ['--', '--port', '0', '--json', '--db', db, '--no-webhook-worker']);
    expect(r.stderr).not.toMatch(/Unexpected argument/);
    expect(JSON.parse(r.line).baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(existsSync(db)).toBe(true);
  });

  it('worker and two-processes: a leading -- is not a positional argument; a -- elsewhere still is', async () => {
    const w = await firstLine(dist('worker'), ['--', '--db', 'postgress:/oops']);
    expect(w.stderr).toMatch(/--db starts with 'postgress:'/);
    const t = await firstLine(dist('two-processes'), ['--', '--db', 'postgress:/oops']);
    expect(t.stderr).not.toMatch(/Unexpected argument/);
    expect(t.stderr).toMatch(/--db must be a postgres/);
    const q = await firstLine(dist('quickstart'), ['--port', '0', '--', '--db', 'x.db']);
    expect(q.code).toBe(1);
    expect(q.stderr).toMatch(/Unexpected argument/);
    rmSync(dir, { recursive: true, force: true });
  });
});
