/*
 * Issue 16 "Installable": every published package, packed as npm would publish it, is clean under
 * publint (errors and warnings fail) and are-the-types-wrong. attw runs with the node16 profile
 * (engines is node >=20.19, so node10 resolution is not a target) and ignores only
 * `cjs-resolves-to-esm`: `require()` of our ESM entry points is Node's require(esm), which
 * test/exports.test.ts and the packed-tarball smoke test prove works (see docs/not-shown.md,
 * "Embedding (issue 16)"). attw takes ~15 s, so it runs on CI=true or PMAPI_PACK_SMOKE=1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { PUBLISHED, ROOT, packAll } from './pack-smoke.mjs';

const run = promisify(execFile);
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
/** attw type-checks every entry point (~15 s for all packages): with the packed-tarball smoke test, on CI=true or PMAPI_PACK_SMOKE=1. */
const full = process.env.CI === 'true' || process.env.PMAPI_PACK_SMOKE === '1';
let dest: string;
let tarballs: string[];

/** Runs a linter; resolves to its output when it exits 0, rejects with its output otherwise. */
async function lint(cmd: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd: ROOT, timeout: 120_000, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    return stdout + stderr;
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${basename(cmd)} ${args.join(' ')} failed:\n${x.stdout ?? ''}${x.stderr ?? x.message}`);
  }
}

describe('packed packages pass publint and are-the-types-wrong (issue 16 Installable)', () => {
  beforeAll(() => {
    for (const d of PUBLISHED) expect(existsSync(join(ROOT, 'packages', d, 'dist', 'index.d.ts')), `packages/${d} is built`).toBe(true);
    dest = mkdtempSync(join(tmpdir(), 'pmapi-publint-'));
    tarballs = packAll(dest);
  }, 60_000);
  afterAll(() => rmSync(dest, { recursive: true, force: true }));

  it('every tarball carries its LICENSE, README, built code and types, and core as a peer', async () => {
    for (const t of tarballs) {
      const { stdout } = await run('tar', ['-tzf', t]);
      const files = stdout.split('\n');
      for (const f of ['package/LICENSE', 'package/README.md', 'package/package.json', 'package/dist/index.js', 'package/dist/index.d.ts']) {
        expect(files, `${basename(t)} has ${f}`).toContain(f);
      }
      expect(files.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/')), basename(t)).toEqual([]);
      const pkg = JSON.parse((await run('tar', ['-xOzf', t, 'package/package.json'])).stdout);
      expect(pkg.license).toBe('MIT');
      expect(pkg.engines).toEqual({ node: '>=20.19' });
      expect(JSON.stringify(pkg)).not.toContain('workspace:');
      if (pkg.name !== '@pmapi/core') {
        // One copy of core in an app: the adapters and front ends take the app's core.
        expect(pkg.peerDependencies?.['@pmapi/core'], pkg.name).toBe('^0.1.0');
        expect(pkg.dependencies?.['@pmapi/core'], pkg.name).toBeUndefined();
      }
    }
  });

  it('publint: no errors or warnings', async () => {
    const out = await Promise.all(tarballs.map((t) => lint(bin('publint'), ['run', t, '--strict'])));
    expect(out.length).toBe(PUBLISHED.length);
  }, 60_000);

  it.skipIf(!full)('are-the-types-wrong: no problems (node16 profile, require(esm) allowed)', async () => {
    const out = await Promise.all(
      tarballs.map((t) => lint(bin('attw'), [t, '--profile', 'node16', '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'ascii', '--no-color'])),
    );
    expect(out.length).toBe(PUBLISHED.length);
  }, 120_000);
});
