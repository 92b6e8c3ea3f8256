import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';
import { tombstoneAgentActor } from './actors';

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

/** Every membership of a person (live or removed), with its workspace. */
export async function membershipsOfUser(db: Kysely<any>, userId: string): Promise<Array<{ id: string; teamId: string }>> {
  const rows = await db.selectFrom('members').select(['id', 'team_id']).where('user_id', '=', userId).orderBy('id').execute();
  return rows.map((r) => ({ id: r.id as string, teamId: r.team_id as string }));
}

/** Erase a membership's personal data (spec "Actor": erasure): the placeholder name, no e-mail, inactive. */
export async function scrubMember(db: Kysely<any>, d: DialectSupport, memberId: string, placeholder: string, now: number): Promise<void> {
  await db.updateTable('members').set({ name: placeholder, email: null, active: d.encode('boolean', false), erased_at: d.encode('timestamp', now), updated_at: d.encode('timestamp', now) })
    .where('id', '=', memberId).execute();
}

/** Was this membership erased (scrubMember)? An erased membership is never reactivated nor given tokens. */
export async function isMemberErased(db: Kysely<any>, memberId: string): Promise<boolean> {
  const m = await db.selectFrom('members').select(['id', 'erased_at']).where('id', '=', memberId).executeTakeFirst();
  return m !== undefined && m.erased_at !== null && m.erased_at !== undefined;
}

/**
 * Erase a membership's personal data from its earlier `member.*` events too
 * (the activity feed serves the outbox; undelivered webhooks read it): each
 * event's `member` gets the placeholder name and no e-mail.
 */
export async function scrubMemberEvents(db: Kysely<any>, d: DialectSupport, memberId: string, placeholder: string): Promise<number> {
  const rows = await db.selectFrom('outbox').select(['id', 'body']).where('aggregate_type', '=', 'member').where('aggregate_id', '=', memberId).execute();
  let n = 0;
  for (const row of rows) {
    const body = d.decode('json', row.body) as { payload?: { member?: Record<string, unknown> } };
    const member = body?.payload?.member;
    if (!member || typeof member !== 'object') continue;
    if (member.name === placeholder && (member.email === null || member.email === undefined)) continue;
    body.payload!.member = { ...member, name: placeholder, ...('email' in member ? { email: null } : {}) };
    await db.updateTable('outbox').set({ body: d.encode('json', body) }).where('id', '=', row.id).execute();
    n++;
  }
  return n;
}

/** Erase a person's users row (name and e-mail). */
export async function scrubUser(db: Kysely<any>, userId: string, placeholder: string): Promise<void> {
  await db.updateTable('users').set({ name: placeholder, email: null }).where('id', '=', userId).execute();
}

/** Revoke every live token (personal and OAuth) of a membership as of `now`. */
export async function revokeMemberTokens(db: Kysely<any>, d: DialectSupport, memberId: string, now: number): Promise<void> {
  await db.updateTable('access_tokens').set({ revoked_at: d.encode('timestamp', now) })
    .where('member_id', '=', memberId).where('revoked_at', 'is', null).execute();
}

/**
 * A membership destroyed for good (purged 30 days after removal): its tokens
 * are revoked, and an agent's or automation's actor loses its agentId and is
 * tombstoned (spec "Actor": agentId null after deletion).
 */
export async function retireMember(repo: { db: Kysely<any>; dialect: DialectSupport }, actorsTable: string, m: { id: string; type: unknown; now: number }): Promise<void> {
  await revokeMemberTokens(repo.db, repo.dialect, m.id, m.now);
  if (m.type === 'agent' || m.type === 'automation') await tombstoneAgentActor(repo.db, repo.dialect, actorsTable, { memberId: m.id, now: m.now });
}
