import type { SqlStore } from '../../sql/dialect';
import { consumeOAuthCode, insertOAuthCode, insertOAuthFamily, oauthCodeRow } from '../../sql/queries/oauth';
import { sha256 } from '../../auth/tokens';
import { OAuthError } from '../errors';
import { verifyPkce } from '../pkce';
import type { OAuthClientRow } from '../clients';
import { CODE_LENGTH, CODE_TTL_MS, issueTokens, loadFamily, memberState, revokeFamily, type GrantDeps, type TokenResponse } from './shared';

/**
 * Consent given: a new refresh-token family whose ceiling is the consented
 * scope (already clamped to the member's role), and its authorization code
 * (RFC 6749 §4.1.2), valid 60 s, stored as its SHA-256 digest. `macros` are
 * the macros the request literally asked for (the legacy surface's macro holders).
 */
export async function issueCode(store: SqlStore, g: GrantDeps, input: {
  clientId: string; memberId: string; teamId: string; ceiling: readonly string[]; macros: readonly string[]; redirectUri: string; codeChallenge: string; now: number;
}): Promise<string> {
  const code = g.ids.secret(CODE_LENGTH);
  const familyId = g.ids.id();
  await store.transaction(async (trx) => {
    await insertOAuthFamily(trx, g.d, {
      id: familyId, clientId: input.clientId, memberId: input.memberId, teamId: input.teamId, scopes: input.ceiling, macros: input.macros, now: input.now,
    });
    await insertOAuthCode(trx, g.d, {
      hash: sha256(code), clientId: input.clientId, familyId, redirectUri: input.redirectUri, codeChallenge: input.codeChallenge,
      expiresAt: input.now + CODE_TTL_MS, now: input.now,
    });
  });
  return code;
}

const grantError = (why: string) => new OAuthError('invalid_grant', why);

/**
 * The authorization_code grant (RFC 6749 §4.1.3, OAuth 2.1 §4.1.3): the code
 * is consumed by one atomic statement, so exactly one of any number of
 * concurrent exchanges wins; a second redemption revokes everything the first
 * issued (RFC 6749 §4.1.2). Every outcome commits (a refusal may revoke).
 */
export async function redeemCode(store: SqlStore, g: GrantDeps, client: OAuthClientRow, p: { code: string; redirectUri: string; codeVerifier: string }, now: number): Promise<TokenResponse> {
  const hash = sha256(p.code);
  const out = await store.transaction(async (trx): Promise<TokenResponse | OAuthError> => {
    const won = await consumeOAuthCode(trx, g.d, hash, client.id, now);
    const row = await oauthCodeRow(trx, hash);
    if (!won) {
      if (!row || row.client_id !== client.id) return grantError('The authorization code is not valid for this client');
      if (row.consumed_at !== null) {
        await revokeFamily(trx, g.d, row.family_id as string, now);
        return grantError('The authorization code was already used; the tokens it issued are revoked');
      }
      return grantError('The authorization code has expired');
    }
    const familyId = row!.family_id as string;
    if (row!.redirect_uri !== p.redirectUri) return grantError('redirect_uri differs from the authorization request');
    if (!verifyPkce(p.codeVerifier, row!.code_challenge as string)) return grantError('code_verifier does not match the code_challenge');
    const family = await loadFamily(trx, g.d, familyId);
    if (!family || family.revoked) return grantError('The authorization was revoked');
    const member = await memberState(trx, g, family.memberId);
    if (!member || !member.active || member.teamId !== family.teamId) {
      await revokeFamily(trx, g.d, family.id, now);
      return grantError('The approving member is no longer active');
    }
    const issued = await issueTokens(trx, g, family, member, family.ceiling, now);
    if (issued === 'empty') {
      await revokeFamily(trx, g.d, family.id, now);
      return grantError("The member's role no longer grants any of the consented scope");
    }
    return issued;
  });
  if (out instanceof OAuthError) throw out;
  return out;
}
