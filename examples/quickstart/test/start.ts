import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
  if (!existsSync(main)) throw new Error(`${main} is missing: run pnpm install (it builds the packages) or pnpm build`);
  const child = spawn(process.execPath, [main, '--port', '0', '--json', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const seed = await new Promise<S>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve(JSON.parse(out.slice(0, nl)) as S);
    });
    child.on('exit', (code) => reject(new Error(`quickstart exited with ${code}`)));
  });
  return { child, seed, stdout: () => out };
}
