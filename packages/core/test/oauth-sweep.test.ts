import { describe, it, expect } from 'vitest';
import { createPmapi, fakeClock } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

describe('OAuth 2.1: the purge job forgets codes, refresh tokens and access tokens a day past expiry', () => {
  it('keeps what may still be replayed, deletes what cannot', async () => {
    const clock = fakeClock('2026-06-01T00:00:00.000Z');
    const store = await openSqliteStore();
    const api = await createPmapi({ store, clock, rateLimiter: false });
    const ts = (ms: number) => store.dialect.encode('timestamp', ms);
    const now = clock.now();
    const day = 24 * 3600 * 1000;
    const row = (hash: string, expires: number) => ({ hash, client_id: 'c1', family_id: 'f1', expires_at: ts(expires), consumed_at: null, created_at: ts(now) });
    await store.db.insertInto('oauth_codes').values([
      { ...row('old-code', now - 2 * day), redirect_uri: 'https://x/cb', code_challenge: 'x' },
      { ...row('new-code', now - 1000), redirect_uri: 'https://x/cb', code_challenge: 'x' },
    ]).execute();
    await store.db.insertInto('oauth_refresh_tokens').values([row('old-rt', now - 2 * day), row('live-rt', now + 6 * day)]).execute();
    const r = await api.jobs.purge();
    expect(r.oauth).toBe(2);
    expect((await store.db.selectFrom('oauth_codes').select('hash').execute()).map((x) => x.hash)).toEqual(['new-code']);
    expect((await store.db.selectFrom('oauth_refresh_tokens').select('hash').execute()).map((x) => x.hash)).toEqual(['live-rt']);
    await api.close();
  });
});
