import { describe, it, expect } from 'vitest';
import type { StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';

/**
 * Presence statuses ("Other resources": fields not shown; decisions in
 * docs/not-shown.md "Presence statuses"): one per member, managed by that
 * member, read by the whole workspace; an `until` in the past reads as
 * expired.
 */

const HOUR = 3600 * 1000;
const at = (ms: number) => new Date(ms).toISOString();

export function presenceSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Presence statuses: fields (memberId, emoji, text, availability, until, expired)`, () => {
    const H = harnessPerDescribe(factory);

    it('POST /presence-statuses → 201: memberId the caller, defaults (availability available, nulls), expired false; GET answers the same', async () => {
      const s = ok(await H().post('/presence-statuses', { text: '  In a meeting ', memberId: H().a.regular.id }), 201);
      expect(s).toMatchObject({ memberId: H().a.owner.id, text: 'In a meeting', emoji: null, availability: 'available', until: null, expired: false });
      expect(ok(await H().get(`/presence-statuses/${s.id}`))).toEqual(s);
      expect((await H().del(`/presence-statuses/${s.id}`)).status).toBe(204);
    });

    it('one status per member: a second create is 409 conflict; after clearing it, a new one can be set', async () => {
      const s = ok(await H().post('/presence-statuses', { emoji: '🏖️', availability: 'away' }, { token: H().a.regular.token }), 201);
      problem(await H().post('/presence-statuses', { text: 'again' }, { token: H().a.regular.token }), 409, 'conflict');
      expect((await H().del(`/presence-statuses/${s.id}`, { token: H().a.regular.token })).status).toBe(204);
      ok(await H().post('/presence-statuses', { text: 'back' }, { token: H().a.regular.token }), 201);
    });

    it('validation: availability in available|busy|away|doNotDisturb; text ≤ 100; emoji 1-32; until a timestamp after now', async () => {
      const tok = { token: H().a.client.token };
      invalid(await H().post('/presence-statuses', { availability: 'sleeping' }, tok), 'availability');
      invalid(await H().post('/presence-statuses', { text: 't'.repeat(101) }, tok), 'text');
      invalid(await H().post('/presence-statuses', { emoji: '' }, tok), 'emoji');
      invalid(await H().post('/presence-statuses', { emoji: 'e'.repeat(33) }, tok), 'emoji');
      invalid(await H().post('/presence-statuses', { until: 'tomorrow' }, tok), 'until');
      invalid(await H().post('/presence-statuses', { until: at(H().clock.now()) }, tok), 'until', 'not_in_future');
      const s = ok(await H().post('/presence-statuses', { availability: 'doNotDisturb', text: 't'.repeat(100), until: at(H().clock.now() + HOUR) }, tok), 201);
      invalid(await H().patch(`/presence-statuses/${s.id}`, { until: at(H().clock.now() - 1) }, tok), 'until', 'not_in_future');
      expect(ok(await H().patch(`/presence-statuses/${s.id}`, { until: null }, tok)).until).toBeNull();
      await H().del(`/presence-statuses/${s.id}`, tok);
    });

    it('an until that has passed reads expired: true (GET and list) and until[gt]=now lists only current ones', async () => {
      const s = ok(await H().post('/presence-statuses', { text: 'Lunch', until: at(H().clock.now() + HOUR) }), 201);
      expect(s.expired).toBe(false);
      H().clock.advance(HOUR);
      expect(ok(await H().get(`/presence-statuses/${s.id}`)).expired).toBe(true);
      const listed = ok(await H().get('/presence-statuses')).data.find((x: any) => x.id === s.id);
      expect(listed.expired).toBe(true);
      const current = ok(await H().get(`/presence-statuses?until[gt]=${encodeURIComponent(at(H().clock.now()))}`)).data.map((x: any) => x.id);
      expect(current).not.toContain(s.id);
      await H().del(`/presence-statuses/${s.id}`);
    });
  });

  describe(`[${factory.name}] v3 Presence statuses: each member manages their own; everyone in the workspace reads them`, () => {
    const H = harnessPerDescribe(factory);

    it('every member (guests too) lists and reads every status of the workspace; another workspace sees none', async () => {
      const mine = ok(await H().post('/presence-statuses', { text: 'Owner here' }), 201);
      const theirs = ok(await H().post('/presence-statuses', { text: 'Regular here' }, { token: H().a.regular.token }), 201);
      for (const token of [H().a.owner.token, H().a.regular.token, H().a.client.token]) {
        const ids = ok(await H().get('/presence-statuses', { token })).data.map((x: any) => x.id).sort();
        expect(ids).toEqual([mine.id, theirs.id].sort());
      }
      ok(await H().get(`/presence-statuses/${theirs.id}`, { token: H().a.client.token }));
      expect(ok(await H().get(`/presence-statuses?memberId[eq]=${H().a.regular.id}&expand=member`)).data[0].member.id).toBe(H().a.regular.id);
      problem(await H().get(`/presence-statuses/${mine.id}`, { token: H().b.owner.token }), 404, 'resource_not_found');
      expect(ok(await H().get('/presence-statuses', { token: H().b.owner.token })).data).toEqual([]);
    });

    it("nobody else changes a member's status, not even the owner (403); only the member or a holder of manageMembers clears it", async () => {
      const s = ok(await H().post('/presence-statuses', { text: 'Mine', availability: 'busy' }, { token: H().a.client.token }), 201);
      problem(await H().patch(`/presence-statuses/${s.id}`, { text: 'Yours now' }), 403, 'permission_denied');
      problem(await H().patch(`/presence-statuses/${s.id}`, { text: 'Yours now' }, { token: H().a.regular.token }), 403, 'permission_denied');
      problem(await H().del(`/presence-statuses/${s.id}`, { token: H().a.regular.token }), 403, 'permission_denied');
      expect(ok(await H().get(`/presence-statuses/${s.id}`)).text).toBe('Mine');
      expect(ok(await H().patch(`/presence-statuses/${s.id}`, { text: 'Still mine' }, { token: H().a.client.token })).text).toBe('Still mine');
      // The owner holds manageMembers: clearing is allowed.
      expect((await H().del(`/presence-statuses/${s.id}`)).status).toBe(204);
    });

    it('lifecycle events presenceStatus.created, .updated, .removed reach the whole workspace (no audience)', async () => {
      const { events, result } = await during(H(), async () => {
        const s = ok(await H().post('/presence-statuses', { text: 'Evented' }, { token: H().a.client.token }), 201);
        ok(await H().patch(`/presence-statuses/${s.id}`, { availability: 'away' }, { token: H().a.client.token }));
        await H().del(`/presence-statuses/${s.id}`, { token: H().a.client.token });
        return s;
      });
      expect(ofType(events, 'presenceStatus.created', result.id)[0].payload.presenceStatus.text).toBe('Evented');
      expect(ofType(events, 'presenceStatus.updated', result.id)[0].payload.presenceStatus.availability).toBe('away');
      expect(ofType(events, 'presenceStatus.removed', result.id)).toHaveLength(1);
    });
  });
}
