import type { SqlStore } from '../../sql/dialect';
import { consumeRefreshToken, refreshTokenOwner, refreshTokenRow } from '../../sql/queries/oauth';
import { sha256 } from '../../auth/tokens';
import { OAuthError } from '../errors';
import type { OAuthClientRow } from '../clients';
import { expandScopes, parseScope } from '../scopes';
import { issueTokens, loadFamily, memberState, revokeFamily, type GrantDeps, type TokenResponse } from './shared';

const grantError = (why: string) => new OAuthError('invalid_grant', why);

/**
 * The refresh_token grant (RFC 6749 §6, OAuth 2.1 §4.3): single use with
 * rotation. The token is consumed by one atomic statement; a consumed token
 * presented again revokes its whole family (OAuth 2.1 §4.3.1). The family's
 * ceiling never grows (§4.3.3); a `scope` beyond it is invalid_scope; the
 * role clamp emptying it revokes the family (spec "Scopes").
 */
export async function refresh(store: SqlStore, g: GrantDeps, client: OAuthClientRow, p: { refreshToken: string; scope?: string }, now: number): Promise<TokenResponse> {
  const hash = sha256(p.refreshToken);
  // Non-authoritative read, so a bad `scope` is refused without burning the token.
  const seen = await refreshTokenOwner(store.db, hash);
  if (!seen || seen.client_id !== client.id) throw grantError('The refresh token is not valid for this client');
  let requested: string[] | undefined;
  if (p.scope !== undefined) {
    requested = parseScope(g.registry, p.scope);
    if (!requested) throw new OAuthError('invalid_scope', 'scope names a scope the server does not advertise');
    const fam = await loadFamily(store.db, g.d, seen.family_id as string);
    const ceiling = expandScopes(g.registry, fam?.ceiling ?? []);
    const beyond = [...expandScopes(g.registry, requested)].filter((s) => !ceiling.has(s));
    if (beyond.length) throw new OAuthError('invalid_scope', `scope exceeds what was granted: ${beyond.join(' ')}`);
  }
  const out = await store.transaction(async (trx): Promise<TokenResponse | OAuthError> => {
    if (!(await consumeRefreshToken(trx, g.d, hash, client.id, now))) {
      const row = await refreshTokenRow(trx, hash);
      if (row && row.consumed_at !== null) {
        await revokeFamily(trx, g.d, row.family_id as string, now);
        return grantError('The refresh token was already used; every token of this authorization is revoked');
      }
      return grantError('The refresh token has expired');
    }
    const family = await loadFamily(trx, g.d, seen.family_id as string);
    if (!family || family.revoked) return grantError('The authorization was revoked; authorize the app again');
    const member = await memberState(trx, g, family.memberId);
    if (!member || !member.active || member.teamId !== family.teamId) {
      await revokeFamily(trx, g.d, family.id, now);
      return grantError('The approving member is no longer active');
    }
    const issued = await issueTokens(trx, g, family, member, requested ?? family.ceiling, now);
    if (issued === 'empty') {
      await revokeFamily(trx, g.d, family.id, now);
      return grantError("The member's role no longer grants any of the consented scope; the authorization is revoked");
    }
    return issued;
  });
  if (out instanceof OAuthError) throw out;
  return out;
}
