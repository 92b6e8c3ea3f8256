import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/** A person (a `users` row): one per human, however many workspaces they belong to. */
export interface NewUser {
  id: string;
  name: string;
  email: string | null;
  now: number;
}

/** Create a person's users row. */
export async function insertUser(trx: Kysely<any>, d: DialectSupport, u: NewUser): Promise<void> {
  await trx.insertInto('users').values({ id: u.id, name: u.name, email: u.email, created_at: d.encode('timestamp', u.now) }).execute();
}

/** Create a person's users row unless they already have one (a person known to the embedding application). */
export async function insertUserIfAbsent(trx: Kysely<any>, d: DialectSupport, u: NewUser): Promise<void> {
  await trx.insertInto('users').values({ id: u.id, name: u.name, email: u.email, created_at: d.encode('timestamp', u.now) })
    .onConflict((oc) => oc.column('id').doNothing()).execute();
}

/** Deactivate or reactivate a membership, stamping `updated_at` with `now`. */
export async function setMemberActive(db: Kysely<any>, d: DialectSupport, memberId: string, active: boolean, now: number): Promise<void> {
  await db.updateTable('members').set({ active: d.encode('boolean', active), updated_at: d.encode('timestamp', now) })
    .where('id', '=', memberId).execute();
}

/** The workspace (team id) of a membership; undefined when there is no such member. */
export async function teamOfMember(db: Kysely<any>, memberId: string): Promise<string | undefined> {
  const m = await db.selectFrom('members').select(['id', 'team_id']).where('id', '=', memberId).executeTakeFirst();
  return m ? (m.team_id as string) : undefined;
}
