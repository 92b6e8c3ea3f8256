import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Packages whose built output tests run in child processes (the quickstart, webhook workers), in build order. */
const BUILT = [
  ['packages/core', 'dist/index.js'],
  ['packages/adapter-sqlite', 'dist/index.js'],
  ['packages/adapter-postgres', 'dist/index.js'],
  ['packages/cli', 'dist/index.js'],
  ['packages/http-node', 'dist/index.js'],
  ['packages/webhooks', 'dist/index.js'],
  ['packages/testing', 'dist/index.js'],
  ['packages/thumbnails', 'dist/index.js'],
  ['packages/blob-s3', 'dist/index.js'],
  ['examples/quickstart', 'dist/main.js'],
  ['examples/worker', 'dist/main.js'],
  ['examples/two-processes', 'dist/main.js'],
] as const;

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * Rebuild any package whose sources are newer than its build, so tests that
 * start the quickstart or a worker as a separate process never run stale code
 * (a fresh `pnpm install` builds everything anyway).
 */
export default function setup(): void {
  // A developer running only in-process suites while editing sources can skip the rebuild.
  if (process.env.PMAPI_SKIP_BUILD === '1') return;
  let stale = false;
  for (const [pkg, out] of BUILT) {
    const dist = join(root, pkg, out);
    if (stale || !existsSync(dist) || statSync(dist).mtimeMs < newest(join(root, pkg, 'src'))) {
      stale = true;
      execFileSync('pnpm', ['build'], { cwd: join(root, pkg), stdio: 'ignore' });
    }
  }
}
