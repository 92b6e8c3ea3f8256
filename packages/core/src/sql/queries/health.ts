import { sql, type Kysely } from 'kysely';

/** One round trip to the database (the health endpoint's readiness check); throws when it is unreachable or closed. */
export async function pingStore(db: Kysely<any>): Promise<void> {
  await sql`select 1 as ok`.execute(db);
}
