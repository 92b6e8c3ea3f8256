import type { IdGenerator } from '../ids/index';
import { PAT_PREFIX_LENGTH, PAT_SECRET_LENGTH, sha256 } from './tokens';

export interface TokenSecret {
  /** The full secret `svc_user_<prefix>_<secret>`: shown once, never stored. */
  token: string;
  /** The non-secret lookup key. */
  prefix: string;
  /** SHA-256 digest of the whole token: the only form stored. */
  hash: string;
}

/**
 * A fresh personal access token `svc_user_<prefix>_<secret>`: the one
 * generator behind `POST /personal-access-tokens` and `api.admin.issueToken`.
 * Callers store `prefix` and `hash`, and show `token` once.
 */
export function newPersonalToken(ids: IdGenerator): TokenSecret {
  const prefix = ids.secret(PAT_PREFIX_LENGTH);
  const token = `svc_user_${prefix}_${ids.secret(PAT_SECRET_LENGTH)}`;
  return { token, prefix, hash: sha256(token) };
}
