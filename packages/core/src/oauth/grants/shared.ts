import type { Kysely } from 'kysely';
import type { DialectSupport } from '../../sql/dialect';
import { insertOAuthAccessToken, insertRefreshToken, memberWithRole, oauthFamilyRow, revokeOAuthFamily } from '../../sql/queries/oauth';
import type { IdGenerator } from '../../ids/index';
import type { Registry } from '../../resources/registry';
import type { PermissionResolver } from '../../auth/tokens';
import { PAT_PREFIX_LENGTH, PAT_SECRET_LENGTH, sha256 } from '../../auth/tokens';
import { clampScopes, coarseSummary } from '../scopes';

/** Spec "Limits": authorization code 60 s, access token 3600 s, refresh token 7 days. */
export const CODE_TTL_MS = 60_000;
export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_MS = 7 * 24 * 3600_000;
export const CODE_LENGTH = 43;
export const REFRESH_TOKEN_LENGTH = 48;

export interface GrantDeps {
  d: DialectSupport;
  ids: IdGenerator;
  registry: Registry;
  permissionsOf: PermissionResolver;
}

export interface MemberState {
  id: string;
  teamId: string;
  name: string;
  active: boolean;
  permissions: ReadonlySet<string>;
}

/** A member with the permissions its role grants now. */
export async function memberState(db: Kysely<any>, g: GrantDeps, memberId: string): Promise<MemberState | undefined> {
  const r = await memberWithRole(db, memberId);
  if (!r) return undefined;
  return {
    id: r.id as string,
    teamId: r.team_id as string,
    name: r.name as string,
    // A removed (trashed) member is as inactive as a deactivated one: no approvals, no codes exchanged, no refreshes.
    active: (g.d.decode('boolean', r.active) as boolean) && (r.purge_at === null || r.purge_at === undefined),
    permissions: g.permissionsOf({
      name: r.role_name as string, editable: g.d.decode('boolean', r.editable) as boolean, permissions: g.d.decode('json', r.permissions) as string[],
    }),
  };
}

export interface Family {
  id: string;
  clientId: string;
  memberId: string;
  teamId: string;
  ceiling: string[];
  revoked: boolean;
}

export async function loadFamily(db: Kysely<any>, d: DialectSupport, id: string): Promise<Family | undefined> {
  const r = await oauthFamilyRow(db, id);
  if (!r) return undefined;
  return {
    id: r.id as string, clientId: r.client_id as string, memberId: r.member_id as string, teamId: r.team_id as string,
    ceiling: d.decode('json', r.scopes) as string[], revoked: r.revoked_at !== null,
  };
}

/** Revoke a family: every access and refresh token it issued stops working at once (RFC 9700 §4.14.2). */
export async function revokeFamily(db: Kysely<any>, d: DialectSupport, familyId: string, now: number): Promise<void> {
  await revokeOAuthFamily(db, d, familyId, now);
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/**
 * Issue an access token (`svc_oauth_<prefix>_<secret>`, scopes = the family's
 * ceiling ∩ the member's current role permissions, RFC 6749 §5.1) and a new
 * refresh token of the same family. Throws 'empty' when the clamp leaves nothing.
 */
export async function issueTokens(trx: Kysely<any>, g: GrantDeps, family: Family, member: MemberState, scopes: readonly string[], now: number): Promise<TokenResponse | 'empty'> {
  const granted = clampScopes(g.registry, scopes, member.permissions);
  if (granted.length === 0) return 'empty';
  const prefix = g.ids.secret(PAT_PREFIX_LENGTH);
  const access = `svc_oauth_${prefix}_${g.ids.secret(PAT_SECRET_LENGTH)}`;
  const refresh = g.ids.secret(REFRESH_TOKEN_LENGTH);
  await insertOAuthAccessToken(trx, g.d, family, {
    id: g.ids.id(), prefix, hash: sha256(access), scopes: granted, expiresAt: now + ACCESS_TOKEN_TTL_S * 1000, now,
  });
  await insertRefreshToken(trx, g.d, family, { hash: sha256(refresh), expiresAt: now + REFRESH_TOKEN_TTL_MS, now });
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_S, refresh_token: refresh, scope: coarseSummary(granted) };
}
