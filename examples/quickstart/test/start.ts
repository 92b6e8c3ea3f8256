import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { start } from '../../../test/processes';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** What `--json` prints once listening (the fields every test reads; the OAuth test reads more). */
export interface Seed {
  baseUrl: string;
  teams: { id: string; members: { id: string; role: string; token: string }[] }[];
}

/**
 * Start the built quickstart with `--port 0 --json` and the given extra
 * arguments; resolves with its first JSON line, the raw stdout so far (for
 * checks on what it prints) and the child to kill afterwards.
 */
export async function startQuickstart<S extends Seed = Seed>(args: string[] = []): Promise<{ child: ChildProcess; seed: S; stdout: () => string }> {
  const { child, first, stdout } = await start<S>(main, ['--port', '0', '--json', ...args]);
  return { child, seed: first, stdout };
}
