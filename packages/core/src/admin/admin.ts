import type { Kysely } from 'kysely';
import type { SqlStore } from '../sql/dialect';
import type { Clock } from '../clock/index';
import type { IdGenerator } from '../ids/index';
import { newPersonalToken } from '../auth/mint';
import { isValidScope } from '../auth/scopes';
import { initialsOf, PALETTE, secondaryOf } from '../resources/rules';
import { registerClient, revokeClient, type RegisterOAuthClientInput, type RegisteredOAuthClient } from '../oauth/clients';
import type { Registry } from '../resources/registry';
import { Repo } from '../sql/repo';
import { seedRecord } from '../services/records';
import { insertWorkspace, setAllowCompletingBlockedTasks, setWorkspaceOwner } from '../sql/queries/workspaces';
import { setWorkspaceQuota } from '../sql/queries/files';
import { insertUser, insertUserIfAbsent, isMemberErased, membershipsOfUser, revokeMemberTokens, scrubMember, scrubMemberEvents, scrubUser, setMemberActive, teamOfMember } from '../sql/queries/members';
import { tombstoneMemberActor } from '../sql/queries/actors';
import { announce } from '../services/records';
import type { Engine } from '../services/engine';
import type { PendingEvent, Principal, WriteContext } from '../services/context';
import { releaseMember } from '../resources/people.resource';
import { scrubPresenceEvents } from '../sql/queries/presence';
import { roleIdByName } from '../sql/queries/roles';
import { revokeToken } from '../sql/queries/tokens';
import { PAT_NAME_MAX } from '../resources/personal-access-token.resource';
import { DEFAULT_TOKEN_NAME } from '../sql/migrations/0030-unnamed-tokens';

/** The four built-in roles (spec "Role"); their permission lists arrive with access control. */
export const BUILTIN_ROLES = ['owner', 'manager', 'regular', 'client'] as const;
export type BuiltinRole = (typeof BUILTIN_ROLES)[number];

/** The display name an erased person's actor and membership keep (spec "Actor": a placeholder label). */
export const ERASED_NAME = 'Deleted user';

export interface WorkspaceInfo {
  id: string;
  name: string;
  ownerMemberId: string;
  generalPortfolioId: string;
  roleIds: Record<BuiltinRole, string>;
}

export interface MemberInfo {
  id: string;
  userId: string;
  teamId: string;
  name: string;
  role: string;
}

/**
 * The embedding application's administrative surface: workspaces, members and
 * personal access tokens, written directly (not through v3, so their actor
 * fields are null, as the spec says of records created any other way).
 *
 * @example
 * const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
 * const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write'] });
 */
export class Admin {
  constructor(
    private readonly store: SqlStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly defaultLabels: readonly string[],
    private readonly registry: Registry,
    /** Writes the admin's events (`member.*`) to the outbox; without it the admin emits none. */
    private readonly engine?: Engine,
  ) {}

  private get d() {
    return this.store.dialect;
  }

  /** A workspace with its built-in roles, its owner, its General portfolio and default labels. */
  async createWorkspace(input: { name: string; timezone?: string; owner: { name: string; email?: string; userId?: string } }): Promise<WorkspaceInfo> {
    return this.store.transaction(async (trx) => {
      const now = this.clock.now();
      const teamId = this.ids.id();
      await insertWorkspace(trx, this.d, { id: teamId, name: input.name, timezone: input.timezone ?? 'UTC', now });
      // Seeded through the declarations (columns and encodings come from them).
      const repo = new Repo(trx, this.d);
      const seed = (name: string, values: Record<string, unknown>) => seedRecord(repo, this.ids, this.registry.get(name), teamId, values, now);
      const roleIds = {} as Record<BuiltinRole, string>;
      for (const name of BUILTIN_ROLES) {
        roleIds[name] = (await seed('role', { name, editable: false, permissions: [] })).id;
      }
      const owner = await this.insertMember(trx, teamId, { ...input.owner, role: 'owner' }, roleIds.owner, now);
      await setWorkspaceOwner(trx, teamId, owner.id);
      const color = PALETTE[0];
      const general = await seed('portfolio', {
        name: 'General', initials: initialsOf('General'), color, secondaryColor: secondaryOf(color), isGeneral: true, order: 0, ownerId: owner.id,
      });
      const generalPortfolioId = general.id;
      for (const name of this.defaultLabels) await seed('label', { name, isDefault: true, type: 0 });
      return { id: teamId, name: input.name, ownerMemberId: owner.id, generalPortfolioId, roleIds };
    });
  }

  private async insertMember(trx: Kysely<any>, teamId: string, m: { name: string; email?: string; userId?: string; role: string; type?: 'agent' | 'automation' }, roleId: string, now: number): Promise<MemberInfo> {
    let userId = m.userId;
    if (!userId) {
      userId = this.ids.id();
      await insertUser(trx, this.d, { id: userId, name: m.name, email: m.email ?? null, now });
    } else {
      // A person known to the embedding application but new here: give them their users row (per-user caps lock it).
      await insertUserIfAbsent(trx, this.d, { id: userId, name: m.name, email: m.email ?? null, now });
    }
    const member = await seedRecord(new Repo(trx, this.d), this.ids, this.registry.get('member'), teamId, {
      userId, name: m.name, email: m.email ?? null, roleId, role: m.role, active: true, type: m.type ?? 'human', purgeAt: null, deletedById: null,
    }, now);
    return { id: member.id, userId, teamId, name: m.name, role: m.role };
  }

  /** Add a person to a workspace with one of its roles (by name). Pass `userId` to add an existing person. */
  async addMember(teamId: string, input: { name: string; email?: string; role?: string; userId?: string }): Promise<MemberInfo> {
    return this.store.transaction(async (trx) => {
      const role = input.role ?? 'regular';
      // Locked: a concurrent delete of the role waits for us (or we see it gone).
      const roleId = await roleIdByName(trx, this.d, teamId, role);
      if (!roleId) throw new Error(`pmapi admin: workspace ${teamId} has no role '${role}'`);
      const member = await this.insertMember(trx, teamId, { ...input, role }, roleId, this.clock.now());
      await this.announceMember(trx, teamId, member.id, 'created');
      return member;
    });
  }

  /**
   * Emit `member.{action}` for a membership as it now is, triggered by the
   * system (spec "Events": admin changes are no v3 caller's).
   */
  private async announceMember(trx: Kysely<any>, teamId: string, memberId: string, action: 'created' | 'updated'): Promise<void> {
    await this.asSystem(trx, teamId, async (ctx) => {
      const res = this.registry.get('member');
      const rec = await ctx.repo.get(res, teamId, memberId, { includeTrashed: true });
      if (rec) await announce(ctx, res, rec, action);
    });
  }

  /** Run `fn` with a write context of the system (no member) in `trx`, then write its events (`triggeredBy: {source: "system"}`). */
  private async asSystem(trx: Kysely<any>, teamId: string, fn: (ctx: WriteContext) => Promise<void>): Promise<void> {
    if (!this.engine) return;
    const principal: Principal = {
      teamId, memberId: '', userId: '', memberName: 'system', role: 'system', roleId: '', permissions: new Set(), tokenId: '', scopes: new Set(), actorId: null,
    };
    const events: PendingEvent[] = [];
    const ctx = this.engine.writeContext(principal, trx, events);
    await fn(ctx);
    await this.engine.flushEvents(trx, principal, events, ctx.now);
  }

  /**
   * A membership that can no longer act (deactivated or erased): its presence
   * status goes and its pending handoffs are settled (docs/not-shown.md
   * "Members management"), then `member.updated`. The membership row was
   * just changed in this transaction, so it is locked.
   */
  private async release(trx: Kysely<any>, teamId: string, memberId: string): Promise<void> {
    await this.asSystem(trx, teamId, (ctx) => releaseMember(ctx, memberId));
  }

  /**
   * Credentials for an agent (an AI or bot acting on its own account) or an
   * automation (a rule engine of the embedding application): a membership of
   * type `agent` or `automation` with a role (default `regular`), and a
   * personal access token with `scopes`, returned once. Its writes carry
   * actor type `agent`/`automation`; its events' triggeredBy is
   * `{source: "agent", agentId}` or `{source: "system"}`. Manage it as a
   * member (PATCH /members/{id} role or active, DELETE); more tokens with
   * `issueToken(memberId, …)`. docs/not-shown.md "Agents and automations".
   *
   * @example
   * const bot = await api.admin.createAgent({ teamId: ws.id, name: 'Triage bot', scopes: ['tasks:write'] });
   */
  async createAgent(input: {
    teamId: string; name: string; type?: 'agent' | 'automation'; role?: string;
    scopes: readonly string[]; tokenName?: string; expiresAt?: Date | number | string;
  }): Promise<{ memberId: string; agentId: string | null; type: 'agent' | 'automation'; tokenId: string; token: string }> {
    const type = input.type ?? 'agent';
    if (type !== 'agent' && type !== 'automation') throw new Error(`pmapi admin: an agent's type is agent or automation, not '${String(type)}'`);
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name.length === 0 || name.length > 100) throw new Error('pmapi admin: an agent needs a name of 1-100 characters');
    for (const s of input.scopes) if (!isValidScope(s)) throw new Error(`pmapi admin: invalid scope '${s}'`);
    if (input.scopes.length === 0) throw new Error('pmapi admin: an agent token needs at least one scope');
    const role = input.role ?? 'regular';
    if (role === 'owner') throw new Error('pmapi admin: the owner role belongs to the workspace owner alone');
    return this.store.transaction(async (trx) => {
      const now = this.clock.now();
      const roleId = await roleIdByName(trx, this.d, input.teamId, role);
      if (!roleId) throw new Error(`pmapi admin: workspace ${input.teamId} has no role '${role}'`);
      const member = await this.insertMember(trx, input.teamId, { name, role, type }, roleId, now);
      const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt).getTime();
      const { token, prefix, hash } = newPersonalToken(this.ids);
      const { id: tokenId } = await seedRecord(new Repo(trx, this.d), this.ids, this.registry.get('personalAccessToken'), input.teamId, {
        memberId: member.id, scopes: [...new Set(input.scopes)], name: tokenName(input.tokenName, 'tokenName') ?? name, expiresAt, prefix, hash, lastUsedAt: null, revokedAt: null,
      }, now);
      await this.announceMember(trx, input.teamId, member.id, 'created');
      return { memberId: member.id, agentId: type === 'agent' ? member.id : null, type, tokenId, token };
    });
  }

  /**
   * Erase a person (spec "Actor"): in every workspace they belong to, their
   * actor is tombstoned (`tombstonedAt` set, `displayName` the placeholder
   * "Deleted user", `memberId` null), their membership keeps its id but loses
   * its name and e-mail and becomes inactive, and their tokens are revoked.
   * Records pointing at the actor or the membership keep their ids; each
   * membership emits `member.updated`. Their presence status is deleted and
   * its earlier events lose its text and emoji; their pending handoffs are
   * settled (declined / withdrawn). docs/not-shown.md "Members management".
   */
  async erasePerson(userId: string): Promise<{ memberIds: string[]; actorIds: string[] }> {
    return this.store.transaction(async (trx) => {
      const now = this.clock.now();
      const memberships = await membershipsOfUser(trx, userId);
      if (memberships.length === 0) throw new Error(`pmapi admin: no person ${userId}`);
      const actorIds: string[] = [];
      const actors = this.registry.get('actor').table;
      for (const m of memberships) {
        const actorId = await tombstoneMemberActor(trx, this.d, actors, { teamId: m.teamId, memberId: m.id, placeholder: ERASED_NAME, now });
        if (actorId) actorIds.push(actorId);
        await scrubMember(trx, this.d, m.id, ERASED_NAME, now);
        await revokeMemberTokens(trx, this.d, m.id, now);
        await this.release(trx, m.teamId, m.id);
        await this.announceMember(trx, m.teamId, m.id, 'updated');
        // Earlier member.* events (the activity feed, undelivered webhooks) lose the person's name and e-mail too,
        // and earlier presenceStatus.* events (the removal just written included) what they wrote in their status.
        await scrubMemberEvents(trx, this.d, m.id, ERASED_NAME);
        await scrubPresenceEvents(trx, this.d, m.teamId, m.id);
      }
      await scrubUser(trx, userId, ERASED_NAME);
      return { memberIds: memberships.map((m) => m.id), actorIds };
    });
  }

  /**
   * Deactivate (or reactivate) a member; their tokens then answer 401
   * token_owner_inactive. Deactivating also deletes their presence status and
   * settles their pending handoffs, as `PATCH /members/{id} {active: false}` does.
   */
  async setMemberActive(memberId: string, active: boolean): Promise<void> {
    await this.store.transaction(async (trx) => {
      // Erasure is not undoable: an erased membership stays inactive.
      if (active && (await isMemberErased(trx, memberId))) throw new Error(`pmapi admin: member ${memberId} was erased and cannot be reactivated`);
      await setMemberActive(trx, this.d, memberId, active, this.clock.now());
      const teamId = await teamOfMember(trx, memberId);
      if (teamId === undefined) return;
      if (!active) await this.release(trx, teamId, memberId);
      await this.announceMember(trx, teamId, memberId, 'updated');
    });
  }

  /** Workspace settings the rules read. */
  async setWorkspaceSettings(teamId: string, s: { allowCompletingBlockedTasks?: boolean; storageQuotaBytes?: number | null }): Promise<void> {
    if (s.allowCompletingBlockedTasks !== undefined) {
      await setAllowCompletingBlockedTasks(this.store.db, this.d, teamId, s.allowCompletingBlockedTasks);
    }
    // The workspace's file storage quota in bytes; null returns it to the API's default (`files.quotaBytes`).
    if (s.storageQuotaBytes !== undefined) {
      if (s.storageQuotaBytes !== null && (!Number.isSafeInteger(s.storageQuotaBytes) || s.storageQuotaBytes < 0)) {
        throw new Error('pmapi admin: storageQuotaBytes must be a whole number of bytes, 0 or more, or null');
      }
      await setWorkspaceQuota(this.store.db, teamId, s.storageQuotaBytes);
    }
  }

  /**
   * Issue a personal access token `svc_user_<prefix>_<secret>` for a member.
   * Only its SHA-256 digest is stored: the token is returned once, here.
   * The embedding application's privileged path: not held to the 20-token cap
   * of `POST /personal-access-tokens`, but its tokens count toward that cap.
   * `name` follows the API's rule (trimmed, 1-100 characters); without one the
   * token is named `API token` (every token has a name, as the API's do).
   */
  async issueToken(memberId: string, input: { scopes: readonly string[]; name?: string; expiresAt?: Date | number | string }): Promise<{ id: string; token: string }> {
    for (const s of input.scopes) if (!isValidScope(s)) throw new Error(`pmapi admin: invalid scope '${s}'`);
    const name = tokenName(input.name, 'name') ?? DEFAULT_TOKEN_NAME;
    const teamId = await teamOfMember(this.store.db, memberId);
    if (teamId === undefined) throw new Error(`pmapi admin: no member ${memberId}`);
    if (await isMemberErased(this.store.db, memberId)) throw new Error(`pmapi admin: member ${memberId} was erased; an erased membership gets no tokens`);
    const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt).getTime();
    const { token, prefix, hash } = newPersonalToken(this.ids);
    // Seeded through the declaration, like the API's tokens.
    const { id } = await seedRecord(new Repo(this.store.db, this.d), this.ids, this.registry.get('personalAccessToken'), teamId, {
      memberId, scopes: [...new Set(input.scopes)], name, expiresAt, prefix, hash, lastUsedAt: null, revokedAt: null,
    }, this.clock.now());
    return { id, token };
  }

  /**
   * Register an OAuth app (spec "OAuth client"): public (PKCE, method none) or
   * confidential (client_secret_post). Redirect URIs must follow rules 2-4
   * (https, or http on localhost/127.0.0.1/[::1]; no `*`, custom scheme,
   * fragment or credentials). A confidential client's secret is returned
   * once, here; only its SHA-256 digest is stored.
   *
   * @example
   * const { clientId, clientSecret } = await api.admin.registerOAuthClient({ name: 'Acme Sync', type: 'confidential', redirectUris: ['https://acme.example/cb'] });
   */
  async registerOAuthClient(input: RegisterOAuthClientInput): Promise<RegisteredOAuthClient> {
    return registerClient(this.store, this.clock, this.ids, input);
  }

  /** Revoke an OAuth app and every token it holds, at once. Returns false when it was unknown or already revoked. */
  async revokeOAuthClient(clientId: string): Promise<boolean> {
    return revokeClient(this.store, this.clock, clientId);
  }

  /** Revoke a token at once. */
  async revokeToken(tokenId: string): Promise<void> {
    await revokeToken(this.store.db, this.d, tokenId, this.clock.now());
  }
}

/** A token name given to the admin API: trimmed, 1-100 characters (the API's rule); undefined when absent. */
function tokenName(v: unknown, option: string): string | undefined {
  if (v === undefined) return undefined;
  const name = typeof v === 'string' ? v.trim() : '';
  if (name.length === 0 || name.length > PAT_NAME_MAX) throw new Error(`pmapi admin: a token's ${option} must be a string of 1-${PAT_NAME_MAX} characters`);
  return name;
}
