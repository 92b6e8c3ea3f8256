import type { SqlStore } from '../sql/dialect';
import { deleteOAuthExpiredBefore } from '../sql/queries/oauth';

/** How long spent artefacts stay after they expire (replay detection needs them until then). */
export const OAUTH_SWEEP_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * Forget OAuth artefacts a day past their expiry: codes (60 s), refresh
 * tokens (7 days) and OAuth access tokens (1 hour). Until then a replayed
 * code or refresh token is still recognised and revokes its family.
 */
export async function sweepOAuth(store: SqlStore, now: number): Promise<number> {
  return deleteOAuthExpiredBefore(store.db, store.dialect, now - OAUTH_SWEEP_GRACE_MS);
}
