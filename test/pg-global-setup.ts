import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A fresh database for this test run, or null when no Postgres is reachable (outside CI). */
    pgUrl: string | null;
  }
}

/**
 * One fresh database per test run on the Postgres named by DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards.
 * In CI an unreachable Postgres fails the run; elsewhere the Postgres suites
 * are skipped with a notice saying how to point them at a server.
 */
export default async function setup(project: TestProject) {
  const admin = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const client = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    const msg = `Postgres is not reachable at ${admin} (${(err as Error).message}).`;
    if (process.env.CI) throw new Error(`${msg} CI runs the Postgres suite and never skips it.`);
    console.warn(`\n[pmapi] ${msg}\n[pmapi] The Postgres suites are SKIPPED. Point them at a server with DATABASE_URL=postgres://user@host:5432/db pnpm test\n`);
    project.provide('pgUrl', null);
    return;
  }
  const name = `pmapi_test_${process.pid}_${Date.now().toString(36)}`;
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  project.provide('pgUrl', url.toString());
  return async () => {
    const c = new pg.Client({ connectionString: admin });
    c.on('error', () => {});
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  };
}
