#!/usr/bin/env node
/*
 * Packed-tarball smoke test (issue 16, "Installable"): `pnpm pack` every publishable package,
 * install the tarballs with npm into a throwaway app OUTSIDE the workspace (no overrides), and run
 * a tiny app against them: an in-memory SQLite store, a workspace, GET /api/v3/members through
 * api.handle, and a @pmapi/testing harness (a seeded API, a request as a member, runJobs) — once
 * through require() (CommonJS, Node's require(esm)) and once through import;
 * and the installed `pmapi` bin migrates a SQLite file.
 *
 *   node test/pack-smoke.mjs            # packs, installs, runs; prints the app's output
 *   node test/pack-smoke.mjs --keep     # keeps the temp dir for a look
 *
 * The packages must be built (`pnpm build`). better-sqlite3 compiles from source on machines
 * without its prebuilt binary: node-gyp takes Node's headers from npm_config_nodedir (default /usr).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every publishable package (the workspace's non-private packages), by directory under packages/. */
export const PUBLISHED = ['core', 'adapter-sqlite', 'adapter-postgres', 'http-node', 'webhooks', 'blob-s3', 'thumbnails', 'cli', 'testing'];

/** Each package's entry points as a consumer names them (from its `exports`). */
export function entryPoints(dir) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'));
  return Object.keys(pkg.exports).map((k) => (k === '.' ? pkg.name : `${pkg.name}/${k.slice(2)}`));
}

/** `pnpm pack` every published package into dest; returns the tarball paths in PUBLISHED order. */
export function packAll(dest) {
  return PUBLISHED.map((dir) => {
    const before = new Set(readdirSync(dest));
    execFileSync('pnpm', ['pack', '--pack-destination', dest], { cwd: join(ROOT, 'packages', dir), stdio: 'ignore' });
    const made = readdirSync(dest).filter((f) => f.endsWith('.tgz') && !before.has(f));
    if (made.length !== 1) throw new Error(`pnpm pack in packages/${dir} made ${made.length} tarballs`);
    return join(dest, made[0]);
  });
}

/** The tiny app: the same steps from CommonJS and from ESM. Prints one JSON line. */
const APP_BODY = `
  const api = await createPmapi({ store: await openSqliteStore() });
  try {
    const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
    const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read'] });
    const res = await api.handle({ method: 'GET', url: '/api/v3/members', headers: { authorization: 'Bearer ' + token } });
    const body = JSON.parse(res.body);
    // @pmapi/testing as a user's test would use it: a seeded API, a request as a member, time moved and the jobs run.
    const t = await createTestApi();
    let testing;
    try {
      const made = await t.as(t.a.owner).post('/projects', { name: 'Launch' });
      await t.advance('1h');
      const run = await t.runJobs();
      testing = { status: made.status, name: made.body.name, ran: typeof run.purge.purged };
    } finally {
      await t.close();
    }
    console.log(JSON.stringify({ status: res.status, names: body.data.map((m) => m.name), handler: typeof toNodeHandler, webhooks: Object.keys(webhooks).length, testing }));
  } finally {
    await api.close();
  }
`;
const CJS_APP = `'use strict';
const { createPmapi } = require('@pmapi/core');
const { openSqliteStore } = require('@pmapi/adapter-sqlite');
const { toNodeHandler } = require('@pmapi/http-node');
const webhooks = require('@pmapi/webhooks');
const { createTestApi } = require('@pmapi/testing');
(async () => {${APP_BODY}})().catch((e) => { console.error(e); process.exit(1); });
`;
const ESM_APP = `import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler } from '@pmapi/http-node';
import * as webhooks from '@pmapi/webhooks';
import { createTestApi } from '@pmapi/testing';
${APP_BODY}`;

/**
 * Pack, install into a fresh app under the OS temp dir, run both apps. Returns their parsed output
 * and the app dir (removed unless keep).
 */
export function packSmoke({ keep = false, log = () => {} } = {}) {
  const work = mkdtempSync(join(tmpdir(), 'pmapi-pack-smoke-'));
  try {
    const tarballs = join(work, 'tarballs');
    const app = join(work, 'app');
    mkdirSync(tarballs);
    mkdirSync(app);
    const files = packAll(tarballs);
    log(`packed ${files.length} tarballs`);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pmapi-smoke-app', version: '1.0.0', private: true }, null, 2));
    const env = { ...process.env, npm_config_nodedir: process.env.npm_config_nodedir || '/usr' };
    // No workspace around the app: npm must resolve every dependency (and the @pmapi/core peer) from the tarballs and the registry.
    for (const k of Object.keys(env)) if (k.startsWith('npm_package_') || k === 'npm_config_workspace') delete env[k];
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', ...files], {
      cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 15 * 60_000,
    });
    log('installed');
    const installed = readdirSync(join(app, 'node_modules', '@pmapi'));
    const coreCopies = findCopies(join(app, 'node_modules'), '@pmapi/core');
    writeFileSync(join(app, 'app.cjs'), CJS_APP);
    writeFileSync(join(app, 'app.mjs'), ESM_APP);
    const run = (f) => JSON.parse(execFileSync(process.execPath, [f], { cwd: app, encoding: 'utf8', timeout: 60_000 }).trim().split('\n').pop());
    // The installed `pmapi` bin (@pmapi/cli) migrates a new SQLite file, then finds it up to date.
    const pmapi = (...args) => execFileSync(join(app, 'node_modules', '.bin', 'pmapi'), args, { cwd: app, encoding: 'utf8', timeout: 60_000 }).trim().split('\n');
    const migrated = pmapi('migrate', '--db', 'smoke.db');
    const cli = { applied: migrated.filter((l) => l.startsWith('applied ')).length, last: migrated.pop(), again: pmapi('migrate', '--db', 'smoke.db').pop() };
    return { app, installed, coreCopies, cjs: run('app.cjs'), esm: run('app.mjs'), cli };
  } finally {
    if (!keep) rmSync(work, { recursive: true, force: true });
  }
}

/** Every node_modules/<name> directory under dir (a second copy of core would show here). */
function findCopies(dir, name, out = []) {
  if (!existsSync(dir)) return out;
  if (existsSync(join(dir, name, 'package.json'))) out.push(join(dir, name));
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const sub = e.name.startsWith('@') ? readdirSync(join(dir, e.name)).map((s) => join(dir, e.name, s)) : [join(dir, e.name)];
    for (const p of sub) findCopies(join(p, 'node_modules'), name, out);
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = packSmoke({ keep: process.argv.includes('--keep'), log: (m) => console.error(`pack-smoke: ${m}`) });
  console.log(JSON.stringify(r, null, 2));
  const ok = [r.cjs, r.esm].every((x) => x.status === 200 && x.names.includes('Ada') && x.testing?.status === 201) && r.coreCopies.length === 1 && r.cli.applied > 0 && /up to date/.test(r.cli.again);
  if (!ok) { console.error('pack-smoke: FAILED'); process.exit(1); }
  console.error('pack-smoke: ok');
}
