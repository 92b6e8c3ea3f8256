import type { SqlStore } from '../sql/dialect';

/** How long spent artefacts stay after they expire (replay detection needs them until then). */
export const OAUTH_SWEEP_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * Forget OAuth artefacts a day past their expiry: codes (60 s), refresh
 * tokens (7 days) and OAuth access tokens (1 hour). Until then a replayed
 * code or refresh token is still recognised and revokes its family.
 */
export async function sweepOAuth(store: SqlStore, now: number): Promise<number> {
  const before = store.dialect.encode('timestamp', now - OAUTH_SWEEP_GRACE_MS) as any;
  const codes = await store.db.deleteFrom('oauth_codes').where('expires_at', '<', before).executeTakeFirst();
  const refresh = await store.db.deleteFrom('oauth_refresh_tokens').where('expires_at', '<', before).executeTakeFirst();
  const access = await store.db.deleteFrom('access_tokens').where('kind', '=', 'oauth').where('expires_at', '<', before).executeTakeFirst();
  return Number(codes.numDeletedRows) + Number(refresh.numDeletedRows) + Number(access.numDeletedRows);
}
