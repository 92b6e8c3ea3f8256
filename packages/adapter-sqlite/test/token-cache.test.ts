import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createPmapi, fakeClock, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

// Issue 11: on SQLite a token's row is remembered between requests while the database has not changed
// (store.changeStamp: this connection's writes and PRAGMA data_version for other connections), so a GET
// runs one statement instead of two. The spec's rules must hold exactly as without it: a revoked token
// stops authenticating at once (spec "Authentication" rule 6, invalid_token), a deactivated owner's token
// answers token_owner_inactive, an expired one token_expired — whoever made the change, this process or
// another one on the same file.
describe('SQLite: remembered token rows never outlive a change (issue 11)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmapi-token-cache-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function setup(name: string) {
    const file = join(dir, `${name}.db`);
    const statements: string[] = [];
    const clock = fakeClock('2026-03-01T00:00:00.000Z');
    const store = await openSqliteStore({ filename: file, onQuery: (q) => statements.push(q) });
    const api = await createPmapi({ store, clock, rateLimiter: false });
    const ws = await api.admin.createWorkspace({ name: 'W', owner: { name: 'Owner' } });
    const member = await api.admin.addMember(ws.id, { name: 'Ada', role: 'regular' });
    const { id: tokenId, token } = await api.admin.issueToken(member.id, { scopes: ['read', 'write'], expiresAt: '2026-03-02T00:00:00.000Z' });
    const get = async (who = token) => api.handle({ method: 'GET', url: `/api/v3/members/${member.id}`, headers: { authorization: `Bearer ${who}` } });
    return { file, statements, clock, store, api, ws, member, tokenId, token, get };
  }
  const code = (r: { body?: unknown }) => (JSON.parse(String(r.body)) as { code?: string }).code;

  it('a second request reads no token row: one statement fewer', async () => {
    const t = await setup('hit');
    try {
      // The first request records lastUsedAt (a write), so the second reads the row again; the third does not.
      expect((await t.get()).status).toBe(200);
      expect((await t.get()).status).toBe(200);
      t.statements.length = 0;
      expect((await t.get()).status).toBe(200);
      expect(t.statements.filter((q) => /"access_tokens"/.test(q))).toEqual([]);
      expect(t.statements).toHaveLength(1);
    } finally {
      await t.api.close();
    }
  });

  it('a token revoked by another connection to the file (another process) is refused on the next request', async () => {
    const t = await setup('other-revoke');
    try {
      expect((await t.get()).status).toBe(200);
      expect((await t.get()).status).toBe(200);
      const other = new Database(t.file);
      other.prepare('update access_tokens set revoked_at = ? where id = ?').run(Date.parse('2026-03-01T00:00:00.000Z'), t.tokenId);
      other.close();
      const r = await t.get();
      expect([r.status, code(r)]).toEqual([401, 'invalid_token']);
    } finally {
      await t.api.close();
    }
  });

  it('a member deactivated by another store on the same file is refused on the next request', async () => {
    const t = await setup('other-store');
    const second = await createPmapi({ store: await openSqliteStore({ filename: t.file }), clock: t.clock, rateLimiter: false });
    try {
      expect((await t.get()).status).toBe(200);
      expect((await t.get()).status).toBe(200);
      await second.admin.setMemberActive(t.member.id, false);
      const r = await t.get();
      expect([r.status, code(r)]).toEqual([401, 'token_owner_inactive']);
    } finally {
      await second.close();
      await t.api.close();
    }
  });

  it('a revocation or a role change through this store is seen at once', async () => {
    const t = await setup('same');
    try {
      expect((await t.get()).status).toBe(200);
      // A write through store.db (the host's own statement) moves the stamp too.
      await t.store.db.updateTable('members').set({ name: 'Ada L.' }).where('id', '=', t.member.id).execute();
      const renamed = await t.get();
      expect(JSON.parse(String(renamed.body)).name).toBe('Ada L.');
      await t.api.admin.revokeToken(t.tokenId);
      const r = await t.get();
      expect([r.status, code(r)]).toEqual([401, 'invalid_token']);
    } finally {
      await t.api.close();
    }
  });

  it('expiry and the presented secret are judged on every request, not remembered', async () => {
    const t = await setup('expiry');
    try {
      expect((await t.get()).status).toBe(200);
      // Same prefix, another secret: the remembered row's hash does not match.
      const forged = t.token.slice(0, -40) + 'A'.repeat(40);
      const f = await t.get(forged);
      expect([f.status, code(f)]).toEqual([401, 'invalid_token']);
      expect((await t.get()).status).toBe(200);
      t.clock.advance(24 * 3600_000);
      const r = await t.get();
      expect([r.status, code(r)]).toEqual([401, 'token_expired']);
    } finally {
      await t.api.close();
    }
  });
});
