// A scratch database for one benchmark run: a SQLite file in a fresh temporary folder, or a fresh
// Postgres database on DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres).
// `drop()` removes it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export async function scratchDatabase(name, { pg: usePg }) {
  const dir = mkdtempSync(join(tmpdir(), `pmapi-${name}-`));
  if (!usePg) return { url: join(dir, `${name}.db`), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const db = `pmapi_${name}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${db}`);
  const u = new URL(adminUrl);
  u.pathname = `/${db}`;
  return {
    url: u.toString(),
    drop: async () => {
      rmSync(dir, { recursive: true, force: true });
      await admin.query(`drop database if exists ${db} with (force)`);
      await admin.end();
    },
  };
}
