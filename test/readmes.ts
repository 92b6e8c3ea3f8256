import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Every README the README tests check, relative to the root, found afresh on each run: README.md,
 * packages/*\/README.md and examples/*\/README.md (test/readme-snippets.test.ts reads their ts/js blocks,
 * test/readme-commands.test.ts their shell blocks).
 */
export function readmes(): string[] {
  const out = ['README.md'];
  for (const dir of ['packages', 'examples']) {
    for (const d of readdirSync(join(root, dir))) if (existsSync(join(root, dir, d, 'README.md'))) out.push(`${dir}/${d}/README.md`);
  }
  return out;
}
