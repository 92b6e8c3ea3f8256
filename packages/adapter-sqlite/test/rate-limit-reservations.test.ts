// Counts reserved for a busy client by the SQLite database rate limiter (issue 11; spec "Limits"): two stores on one
// counters file stand for two processes on one database.
import { afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rateLimitReservationsSuite } from '@pmapi/conformance';
import { sqliteRateLimitStore } from '@pmapi/adapter-sqlite';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

rateLimitReservationsSuite('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmapi-reserve-'));
  dirs.push(dir);
  const a = sqliteRateLimitStore(join(dir, 'pm.db-limits'));
  const b = sqliteRateLimitStore(join(dir, 'pm.db-limits'));
  return {
    a,
    b,
    close: async () => {
      a.close();
      b.close();
    },
  };
});
