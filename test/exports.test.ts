/*
 * Issue 16 "Installable": every published entry point loads from CommonJS (`require`, through Node's
 * require(esm), unflagged from Node 20.19 for ESM without top-level await) and from ESM, as a consumer
 * outside the workspace resolves it: a temp dir whose node_modules/@pmapi/* link to the built packages,
 * so the packages' own `exports` maps decide (an `import`-only map fails require with
 * ERR_PACKAGE_PATH_NOT_EXPORTED). Both forms must give the same module (one copy, no dual package).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PUBLISHED, ROOT, entryPoints } from './pack-smoke.mjs';

const dirs = PUBLISHED;
const specifiers: string[] = dirs.flatMap((d) => entryPoints(d));
let app: string;

/** Loads every entry point in one child process; prints {specifier: exported names | error code}. */
function load(mode: 'cjs' | 'esm'): Record<string, string[] | string> {
  const script =
    mode === 'cjs'
      ? `const out = {}; for (const s of ${JSON.stringify(specifiers)}) { try { out[s] = Object.keys(require(s)).filter((k) => k !== '__esModule' && k !== 'module.exports').sort(); } catch (e) { out[s] = e.code || String(e); } } console.log(JSON.stringify(out));`
      : `const out = {}; for (const s of ${JSON.stringify(specifiers)}) { try { out[s] = Object.keys(await import(s)).filter((k) => k !== 'default').sort(); } catch (e) { out[s] = e.code || String(e); } } console.log(JSON.stringify(out));`;
  const file = join(app, mode === 'cjs' ? 'load.cjs' : 'load.mjs');
  writeFileSync(file, script);
  return JSON.parse(execFileSync(process.execPath, [file], { cwd: app, encoding: 'utf8', timeout: 30_000 }));
}

describe('published packages load from CommonJS and ESM (issue 16 Installable)', () => {
  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'pmapi-exports-'));
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'exports-probe', private: true }));
    mkdirSync(join(app, 'node_modules', '@pmapi'), { recursive: true });
    for (const d of dirs) {
      expect(existsSync(join(ROOT, 'packages', d, 'dist', 'index.js')), `packages/${d} is built`).toBe(true);
      symlinkSync(join(ROOT, 'packages', d), join(app, 'node_modules', '@pmapi', d), 'dir');
    }
  });
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  it('every entry point is required from CommonJS and imported from ESM, with the same exports', () => {
    const cjs = load('cjs');
    const esm = load('esm');
    for (const s of specifiers) {
      expect(Array.isArray(esm[s]), `import('${s}'): ${String(esm[s])}`).toBe(true);
      expect(Array.isArray(cjs[s]), `require('${s}'): ${String(cjs[s])}`).toBe(true);
      expect((cjs[s] as string[]).length, s).toBeGreaterThan(0);
      expect(cjs[s], s).toEqual(esm[s]);
    }
    expect(cjs['@pmapi/core']).toContain('createPmapi');
    expect(cjs['@pmapi/adapter-sqlite']).toContain('openSqliteStore');
    expect(cjs['@pmapi/testing']).toContain('createTestApi');
    expect(cjs['@pmapi/cli']).toEqual(['USAGE', 'main']);
  });

  it('require and import give one and the same module instance (no dual-package copy of core)', () => {
    const file = join(app, 'same.mjs');
    writeFileSync(
      file,
      `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
       const a = require('@pmapi/core'); const b = await import('@pmapi/core');
       console.log(JSON.stringify({ same: a.createPmapi === b.createPmapi }));`,
    );
    expect(JSON.parse(execFileSync(process.execPath, [file], { cwd: app, encoding: 'utf8' }))).toEqual({ same: true });
  });
});
