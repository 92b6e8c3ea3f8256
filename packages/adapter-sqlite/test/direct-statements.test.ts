import { describe, it, expect } from 'vitest';
import { createPmapi, fakeClock } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

// Issue 11: on SQLite pmapi's fixed-shape statements run on the connection at once, without kysely's executor
// (core sql/statement-cache.ts `execute`, adapter `directRun`). SQLite has one connection: a statement from
// outside a transaction must never run inside one that holds the connection (it would read what that transaction
// has not committed, and its own write would share that transaction's fate). It waits, as through kysely.
describe('SQLite: statements run at once never run inside another request\'s transaction (issue 11)', () => {
  async function setup() {
    const statements: string[] = [];
    const store = await openSqliteStore({ onQuery: (q) => statements.push(q) });
    const api = await createPmapi({ store, clock: fakeClock('2026-03-01T00:00:00.000Z'), rateLimiter: false });
    const ws = await api.admin.createWorkspace({ name: 'W', owner: { name: 'Owner' } });
    const member = await api.admin.addMember(ws.id, { name: 'Ada', role: 'regular' });
    const { token } = await api.admin.issueToken(member.id, { scopes: ['read', 'write'] });
    const get = () => api.handle({ method: 'GET', url: `/api/v3/members/${member.id}`, headers: { authorization: `Bearer ${token}` } });
    return { store, api, member, get, statements };
  }

  it('a read while a transaction holds the connection waits for it, and sees only what it committed', async () => {
    const t = await setup();
    try {
      expect((await t.get()).status).toBe(200);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let inside!: () => void;
      const entered = new Promise<void>((r) => (inside = r));
      const held = t.store.transaction(async (trx) => {
        await trx.updateTable('members').set({ name: 'Not committed' }).where('id', '=', t.member.id).execute();
        inside();
        await gate;
        throw new Error('rolled back');
      });
      held.catch(() => undefined);
      await entered;
      let answered = false;
      const reading = t.get().then((r) => ((answered = true), r));
      // The transaction still holds the connection: the read has not run in it.
      await new Promise((r) => setTimeout(r, 20));
      expect(answered).toBe(false);
      release();
      await expect(held).rejects.toThrow('rolled back');
      const r = await reading;
      expect(r.status).toBe(200);
      expect((JSON.parse(String(r.body)) as { name: string }).name).toBe('Ada');
    } finally {
      await t.api.close();
    }
  });

  it('statements run at once are logged as kysely logs them (onQuery)', async () => {
    const t = await setup();
    try {
      await t.get();
      t.statements.length = 0;
      expect((await t.get()).status).toBe(200);
      expect(t.statements.length).toBeGreaterThan(0);
      expect(t.statements.every((q) => /^\s*select\b/i.test(q))).toBe(true);
    } finally {
      await t.api.close();
    }
  });
});
