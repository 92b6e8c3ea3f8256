import type { Kysely } from 'kysely';
import type { DialectSupport } from '../sql/dialect';
import type { IdGenerator } from '../ids/index';
import { PAT_PREFIX_LENGTH, PAT_SECRET_LENGTH, sha256 } from './tokens';

export interface MintInput {
  teamId: string;
  memberId: string;
  scopes: readonly string[];
  name: string | null;
  /** Expiry instant (ms), or null for none. */
  expiresAt: number | null;
  now: number;
}

export interface MintedToken {
  id: string;
  /** The full secret `svc_user_<prefix>_<secret>`: shown once, never stored. */
  token: string;
  prefix: string;
}

/**
 * Mint a personal access token `svc_user_<prefix>_<secret>` and store only
 * its SHA-256 digest (plus the non-secret prefix, the lookup key). The one
 * implementation behind `api.admin.issueToken` and `POST /personal-access-tokens`.
 */
export async function mintToken(db: Kysely<any>, d: DialectSupport, ids: IdGenerator, input: MintInput): Promise<MintedToken> {
  const prefix = ids.secret(PAT_PREFIX_LENGTH);
  const token = `svc_user_${prefix}_${ids.secret(PAT_SECRET_LENGTH)}`;
  const id = ids.id();
  await db.insertInto('access_tokens').values({
    id, team_id: input.teamId, member_id: input.memberId, kind: 'pat', prefix, hash: sha256(token),
    scopes: d.encode('json', [...new Set(input.scopes)]), name: input.name,
    expires_at: input.expiresAt === null ? null : d.encode('timestamp', input.expiresAt), revoked_at: null,
    created_at: d.encode('timestamp', input.now),
  }).execute();
  return { id, token, prefix };
}
