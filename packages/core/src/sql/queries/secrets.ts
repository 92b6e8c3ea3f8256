import type { Kysely } from 'kysely';

/** The stored value of a named server secret (e.g. `cursor`, the cursor-signing key); undefined when none is stored yet. */
export async function readSecret(db: Kysely<any>, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('secrets').select('value').where('name', '=', name).executeTakeFirst();
  return row ? (row.value as string) : undefined;
}

/** Store a named secret unless one is already stored (concurrent first starts keep the first value). */
export async function insertSecretIfAbsent(db: Kysely<any>, name: string, value: string): Promise<void> {
  await db.insertInto('secrets').values({ name, value }).onConflict((oc) => oc.column('name').doNothing()).execute();
}
