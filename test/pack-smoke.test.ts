/*
 * Issue 16 "Installable", "Done when": the packed-tarball smoke test. `pnpm pack` every package,
 * `npm install` the tarballs into a throwaway app outside the workspace (no overrides, the registry
 * for third-party dependencies), then an app opens an in-memory SQLite store, creates a workspace and
 * answers GET /api/v3/members through api.handle, from CommonJS and from ESM.
 *
 * It takes minutes (better-sqlite3 compiles from source here), so it runs only when CI=true or
 * PMAPI_PACK_SMOKE=1; `node test/pack-smoke.mjs` runs the same by hand.
 */
import { describe, expect, it } from 'vitest';
import { packSmoke } from './pack-smoke.mjs';

const enabled = process.env.CI === 'true' || process.env.PMAPI_PACK_SMOKE === '1';

describe.skipIf(!enabled)('packed tarballs install and run outside the workspace (issue 16 Installable)', () => {
  it('npm installs the tarballs without overrides and a small app answers from CommonJS and ESM', () => {
    const r = packSmoke();
    expect(r.installed.sort()).toEqual(['adapter-postgres', 'adapter-sqlite', 'blob-s3', 'cli', 'core', 'http-node', 'testing', 'thumbnails', 'webhooks']);
    // Core is a peer of the other packages: exactly one copy in the app.
    expect(r.coreCopies.length).toBe(1);
    for (const a of [r.cjs, r.esm]) {
      expect(a.status).toBe(200);
      expect(a.names).toEqual(['Ada']);
      expect(a.handler).toBe('function');
      expect(a.webhooks).toBeGreaterThan(0);
      // The installed @pmapi/testing works as its README says (issue 17).
      expect(a.testing).toEqual({ status: 201, name: 'Launch', ran: 'number' });
    }
    // The installed `pmapi` bin applies every migration to a new SQLite file, then finds it up to date.
    expect(r.cli.applied).toBeGreaterThan(0);
    expect(r.cli.last).toBe(`pmapi migrate: ${r.cli.applied} migrations applied`);
    expect(r.cli.again).toBe('pmapi migrate: up to date (no pending migrations)');
  }, 20 * 60_000);
});
