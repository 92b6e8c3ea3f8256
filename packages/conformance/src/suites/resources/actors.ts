import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../../kit';
import { UUID, problem, iso, expectOk as ok, expectProblem } from './helpers';
import { during, harnessPerDescribe, ofType } from '../shared';
import { retypeMemberlessHumanActors } from '@pmapi/core/sql';

export function actorsSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Actor (GET /actors/{id}; one human actor per member)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('a write stamps a UUID actor id whose actor describes the member', async () => {
      const p = await h.project({ name: 'Actor probe' }, h.a.regular.token);
      expect(p.createdByActorId).toMatch(UUID);
      expect(p.updatedByActorId).toBe(p.createdByActorId);
      expect(p.createdByActorType).toBe('human');
      const r = await h.get(`/actors/${p.createdByActorId}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        id: p.createdByActorId,
        type: 'human',
        displayName: 'Alpha Regular',
        memberId: h.a.regular.id,
        agentId: null,
        tombstonedAt: null,
      });
      expect(r.body.id).not.toBe(h.a.regular.id);
    });

    it('two writes of one member share one actor; another member gets another actor', async () => {
      const p1 = await h.project({ name: 'Actor one', accessType: 'workspace' });
      const p2 = await h.project({ name: 'Actor two' });
      expect(p1.createdByActorId).toMatch(UUID);
      expect(p2.createdByActorId).toBe(p1.createdByActorId);
      const patched = await h.patch(`/projects/${p1.id}`, { description: 'x' }, { token: h.a.regular.token });
      expect(patched.status).toBe(200);
      expect(patched.body.createdByActorId).toBe(p1.createdByActorId);
      expect(patched.body.updatedByActorId).toMatch(UUID);
      expect(patched.body.updatedByActorId).not.toBe(p1.createdByActorId);
      const owner = await h.get(`/actors/${p1.createdByActorId}`);
      const client = await h.get(`/actors/${patched.body.updatedByActorId}`);
      expect(owner.body.memberId).toBe(h.a.owner.id);
      expect(owner.body.displayName).toBe('Alpha Owner');
      expect(client.body.memberId).toBe(h.a.regular.id);
    });

    it('GET /actors (list) is not allowed: 405', async () => {
      const r = await h.get('/actors');
      expect(problem(r)).toEqual({ status: 405, code: 'method_not_allowed' });
      const w = await h.post('/actors', { type: 'human' });
      expect(problem(w)).toEqual({ status: 405, code: 'method_not_allowed' });
      const unknown = await h.get('/actors/00000000-0000-4000-8000-00000000beef');
      expect(problem(unknown)).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it("another workspace's actor is not found", async () => {
      const pb = await h.post('/projects', { name: 'B actor' }, { token: h.b.owner.token });
      expect(pb.status).toBe(201);
      const r = await h.get(`/actors/${pb.body.createdByActorId}`);
      expect(problem(r)).toEqual({ status: 404, code: 'resource_not_found' });
      const own = await h.get(`/actors/${pb.body.createdByActorId}`, { token: h.b.owner.token });
      expect(own.body.memberId).toBe(h.b.owner.id);
    });
  });
  actorErasureAndAgents(factory);
}

function actorErasureAndAgents(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Actor: erasure (tombstonedAt set, displayName a placeholder, memberId null; records keep their actor ids)`, () => {
    const H = harnessPerDescribe(factory);

    it('api.admin.erasePerson tombstones the actor, scrubs the membership (member.updated), revokes the tokens, and every record keeps pointing at the actor', async () => {
      const h = H();
      const m = await h.api.admin.addMember(h.a.id, { name: 'Erin Erased', email: 'erin@alpha.test', role: 'regular' });
      const tok = await h.api.admin.issueToken(m.id, { scopes: ['read', 'write'] });
      const p = await h.project({ name: 'Erasure P', members: [m.id] });
      const t = await h.task(p.id, { name: 'by Erin' }, tok.token);
      const actorId = t.createdByActorId;
      expect(ok(await h.get(`/actors/${actorId}`))).toMatchObject({ type: 'human', displayName: 'Erin Erased', memberId: m.id, tombstonedAt: null });
      h.clock.advance(5000);
      const { result, events } = await during(h, () => h.api.admin.erasePerson(m.userId));
      expect(result).toEqual({ memberIds: [m.id], actorIds: [actorId] });
      const actor = ok(await h.get(`/actors/${actorId}`));
      expect(actor).toMatchObject({ id: actorId, type: 'human', displayName: 'Deleted user', memberId: null, agentId: null, tombstonedAt: iso(h.clock.now()) });
      expect(JSON.stringify(actor)).not.toContain('Erin');
      // The records that point at the actor are intact.
      const task = ok(await h.get(`/tasks/${t.id}?expand=createdByActor`));
      expect(task.createdByActorId).toBe(actorId);
      expect(task.createdByActorType).toBe('human');
      expect(task.createdByActor).toMatchObject({ id: actorId, displayName: 'Deleted user', tombstonedAt: iso(h.clock.now()) });
      // The membership keeps its id (records name it) without the person's data.
      const member = ok(await h.get(`/members/${m.id}`));
      expect(member).toMatchObject({ id: m.id, name: 'Deleted user', email: null, active: false });
      const upd = ofType(events, 'member.updated', m.id);
      expect(upd).toHaveLength(1);
      expect(upd[0].payload.member.name).toBe('Deleted user');
      expect(JSON.stringify(events)).not.toContain('Erin');
      expectProblem(await h.get('/projects', { token: tok.token }), 401, 'invalid_token');
    });

    it('erasure is not undoable: PATCH /members/{id} {active: true} → 409 conflict (reason erased), the admin cannot reactivate it nor issue it a token; the membership stays inactive', async () => {
      const h = H();
      const m = await h.api.admin.addMember(h.a.id, { name: 'Ezra Erased', email: 'ezra@alpha.test', role: 'regular' });
      await h.api.admin.erasePerson(m.userId);
      const r = expectProblem(await h.patch(`/members/${m.id}`, { active: true }), 409, 'conflict');
      expect(r.reason).toBe('erased');
      await expect(h.api.admin.setMemberActive(m.id, true)).rejects.toThrow(/erased/);
      await expect(h.api.admin.issueToken(m.id, { scopes: ['read'] })).rejects.toThrow(/erased/);
      expect(ok(await h.get(`/members/${m.id}`))).toMatchObject({ name: 'Deleted user', active: false });
      // Other changes of an erased membership (its role) and deactivating it again are still allowed.
      expect(ok(await h.patch(`/members/${m.id}`, { role: 'client' })).role).toBe('client');
      // A member never erased is reactivated as before.
      const other = await h.api.admin.addMember(h.a.id, { name: 'Paused', role: 'regular' });
      await h.api.admin.setMemberActive(other.id, false);
      expect(ok(await h.patch(`/members/${other.id}`, { active: true })).active).toBe(true);
    });

    it('erasure scrubs the person from the earlier member.* events too: the activity feed serves no name or e-mail of theirs, only the placeholder', async () => {
      const h = H();
      const m = await h.api.admin.addMember(h.a.id, { name: 'Zoe Zapped', email: 'zoe.zapped@alpha.test', role: 'regular' });
      ok(await h.patch(`/members/${m.id}`, { role: 'client' }));
      const feed = async () => ok(await h.get(`/activity?aggregateId[eq]=${m.id}&limit=200`)).data as any[];
      const before = await feed();
      expect(before.map((e) => e.type).sort()).toEqual(['member.created', 'member.updated']);
      expect(JSON.stringify(before)).toContain('zoe.zapped@alpha.test');
      await h.api.admin.erasePerson(m.userId);
      const after = await feed();
      expect(after).toHaveLength(3);
      const text = JSON.stringify(after);
      expect(text).not.toContain('Zoe');
      expect(text).not.toContain('zoe.zapped');
      for (const e of after) expect(e.payload.member).toMatchObject({ id: m.id, name: 'Deleted user', email: null });
      // Other members' events are untouched.
      expect(JSON.stringify(ok(await h.get(`/activity?aggregateId[eq]=${h.a.regular.id}&limit=200`)).data)).not.toContain('Deleted user');
    });

    it('erasure deletes the person\'s presence status (presenceStatus.removed) and scrubs the text and emoji of their earlier presenceStatus.* events, of statuses cleared and set again too; other members\' presence events keep theirs; their pending handoffs are settled (to them declined, from them withdrawn)', async () => {
      const h = H();
      const m = await h.api.admin.addMember(h.a.id, { name: 'Pia Present', role: 'regular' });
      const as = { token: (await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] })).token };
      const first = ok(await h.post('/presence-statuses', { text: 'Pia at the dentist', emoji: '🦷' }, as), 201);
      ok(await h.patch(`/presence-statuses/${first.id}`, { text: 'Pia back at 3' }, as));
      expect((await h.del(`/presence-statuses/${first.id}`, as)).status).toBe(204);
      const second = ok(await h.post('/presence-statuses', { text: 'Pia in Lisbon', emoji: '🇵🇹', availability: 'away' }, as), 201);
      const other = ok(await h.post('/presence-statuses', { text: 'Regular text kept', emoji: '🙂' }, { token: h.a.regular.token }), 201);
      const p = await h.project({ name: 'Erased handoffs', members: [m.id, h.a.regular.id] });
      const t = await h.task(p.id);
      const toHer = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: m.id }, { token: h.a.regular.token }), 201);
      const fromHer = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: h.a.regular.id, note: 'over to you' }, as), 201);
      h.clock.advance(5000);
      const { events } = await during(h, () => h.api.admin.erasePerson(m.userId));
      expect(ofType(events, 'presenceStatus.removed', second.id)).toHaveLength(1);
      expectProblem(await h.get(`/presence-statuses/${second.id}`), 404, 'resource_not_found');
      const presence = (await h.outbox()).filter((e) => e.aggregateType === 'presenceStatus');
      const hers = presence.filter((e) => e.payload.presenceStatus.memberId === m.id);
      expect(hers.map((e) => `${e.aggregateId === first.id ? 'first' : 'second'} ${e.type}`).sort()).toEqual([
        'first presenceStatus.created', 'first presenceStatus.removed', 'first presenceStatus.updated', 'second presenceStatus.created', 'second presenceStatus.removed',
      ]);
      for (const e of hers) expect(e.payload.presenceStatus).toMatchObject({ memberId: m.id, text: null, emoji: null });
      expect(JSON.stringify(hers)).not.toMatch(/Pia|🦷|🇵🇹/);
      // What is not hers, and what is not text, stays.
      for (const e of hers.filter((x) => x.aggregateId === second.id)) expect(e.payload.presenceStatus.availability).toBe('away');
      const theirs = presence.filter((e) => e.aggregateId === other.id);
      expect(theirs.map((e) => e.payload.presenceStatus)).toEqual([expect.objectContaining({ text: 'Regular text kept', emoji: '🙂' })]);
      // The activity feed serves the scrubbed events.
      expect(JSON.stringify(ok(await h.get('/activity?aggregateType[eq]=presenceStatus&limit=200')).data)).not.toContain('Pia');
      // Her pending handoffs: the one offered to her declined, the one she sent withdrawn.
      expect(ok(await h.get(`/task-handoffs/${toHer.id}`))).toMatchObject({ status: 'declined', respondedAt: iso(h.clock.now()) });
      expect(ofType(events, 'taskHandoff.updated', toHer.id)).toHaveLength(1);
      expect(ofType(events, 'taskHandoff.removed', fromHer.id)).toHaveLength(1);
      expectProblem(await h.get(`/task-handoffs/${fromHer.id}`), 404, 'resource_not_found');
    });

    it('erasure reads the presence events of the member\'s own statuses alone, never a walk of the workspace\'s presence events', async () => {
      // docs/not-shown.md "Members management" (Erasure): the scrub is narrowed by member (migration 0027's index)
      // and by status id; asserted on the statements, never by timing.
      const h = H();
      const m = await h.api.admin.addMember(h.a.id, { name: 'Quinn Quiet', role: 'regular' });
      const as = { token: (await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] })).token };
      const mine = ok(await h.post('/presence-statuses', { text: 'Quinn away', emoji: '🌙' }, as), 201);
      // Cleared by a manager (an event Quinn did not write): still scrubbed.
      expect((await h.del(`/presence-statuses/${mine.id}`)).status).toBe(204);
      const again = ok(await h.post('/presence-statuses', { text: 'Quinn back' }, as), 201);
      // Many presence events of other members (more than a page of the old walk), written straight to the store.
      const other = ok(await h.post('/presence-statuses', { text: 'Owner here' }), 201);
      const src = await h.store.db.selectFrom('outbox').selectAll().where('aggregate_id', '=', other.id).executeTakeFirstOrThrow();
      const copies = Array.from({ length: 1_200 }, (_, i) => ({ ...src, id: `${src.id}c${i}`, aggregate_id: `${other.id}c${i}` }));
      for (let i = 0; i < copies.length; i += 300) await h.store.db.insertInto('outbox').values(copies.slice(i, i + 300)).execute();
      const statements = await h.countQueries(() => h.api.admin.erasePerson(m.userId));
      // Every read of the outbox is narrowed: by member, by aggregate (the member's own member.* events, her
      // statuses) or by id; the presence ones are two statements, however many presence events the workspace holds.
      const reads = statements.filter((q) => /^select/i.test(q) && /from "outbox"/.test(q));
      for (const q of reads) expect(q).toMatch(/"member_id" = (\?|\$)|"aggregate_id" (in \(|= (\?|\$))|"id" (in \(|= (\?|\$))/);
      expect(reads.filter((q) => q.includes('presenceStatus'))).toHaveLength(2);
      const hers = (await h.outbox()).filter((e) => e.aggregateType === 'presenceStatus' && e.payload.presenceStatus.memberId === m.id);
      expect(new Set(hers.map((e) => e.aggregateId))).toEqual(new Set([mine.id, again.id]));
      for (const e of hers) expect(e.payload.presenceStatus).toMatchObject({ text: null, emoji: null });
    });

    it('migration 0028: a human actor with an empty member id (written by purge or admin writes before the systemDefault stamp) becomes the System actor in place; others stay', async () => {
      const h = H();
      const d = h.store.dialect;
      const p = await h.project({ name: 'Stamped by the old purge' });
      const ownerActor = p.createdByActorId;
      const id = '0f0e0d0c-0b0a-4908-8706-050403020100';
      // As such writes stored it: a human actor with member id '' stamping a record.
      await h.store.db.insertInto('actors').values({
        id, team_id: h.a.id, type: 'human', display_name: '', member_id: '', created_at: d.encode('timestamp', h.clock.now()), updated_at: d.encode('timestamp', h.clock.now()),
      }).execute();
      await h.store.db.updateTable('projects').set({ updated_by_actor_id: id }).where('id', '=', p.id).execute();
      expect(ok(await h.get(`/actors/${id}`))).toMatchObject({ id, type: 'human', memberId: '' });
      // An erased person's actor (human, no member, tombstoned) is not one of them.
      const m = await h.api.admin.addMember(h.a.id, { name: 'Erased before', role: 'regular' });
      const tok = (await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] })).token;
      const erasedActor = (await h.project({ name: 'By the erased' }, tok)).createdByActorId;
      await h.api.admin.erasePerson(m.userId);
      const erasedBefore = ok(await h.get(`/actors/${erasedActor}`));
      expect(await retypeMemberlessHumanActors(h.store.db, d, h.clock.now())).toBe(1);
      expect(ok(await h.get(`/actors/${id}`))).toMatchObject({ id, type: 'systemDefault', displayName: 'System', memberId: null, agentId: null });
      expect(ok(await h.get(`/projects/${p.id}`)).updatedByActorId).toBe(id);
      expect(ok(await h.get(`/actors/${ownerActor}`))).toMatchObject({ type: 'human', memberId: h.a.owner.id });
      expect(ok(await h.get(`/actors/${erasedActor}`))).toEqual(erasedBefore);
      expect(await retypeMemberlessHumanActors(h.store.db, d, h.clock.now())).toBe(0);
    });

    it('a person who never wrote has no actor to tombstone; an unknown person is refused', async () => {
      const h = H();
      const m = await h.api.admin.addMember(h.a.id, { name: 'Silent', role: 'client' });
      expect(await h.api.admin.erasePerson(m.userId)).toEqual({ memberIds: [m.id], actorIds: [] });
      await expect(h.api.admin.erasePerson('nosuchuser123')).rejects.toThrow();
    });
  });

  describe(`[${factory.name}] v3 Actor: agents and automations hold credentials from the admin API (actor types agent/automation; triggeredBy agent/system)`, () => {
    const H = harnessPerDescribe(factory);

    it("an agent's writes carry actor type agent; its actor has agentId and no memberId; its events' triggeredBy is {source: agent, agentId}", async () => {
      const h = H();
      const bot = await h.api.admin.createAgent({ teamId: h.a.id, name: 'Triage bot', role: 'manager', scopes: ['read', 'write'] });
      expect(bot).toMatchObject({ type: 'agent', agentId: bot.memberId });
      expect(bot.token).toMatch(/^svc_user_/);
      const p = await h.project({ name: 'Agent P' });
      const { result, events } = await during(h, () => h.post('/tasks', { name: 'filed by the bot', projectId: p.id }, { token: bot.token }));
      const t = ok(result, 201);
      expect(t.createdByActorType).toBe('agent');
      expect(t.createdByActorId).toMatch(UUID);
      const actor = ok(await h.get(`/actors/${t.createdByActorId}`));
      expect(actor).toEqual(expect.objectContaining({ type: 'agent', displayName: 'Triage bot', memberId: null, agentId: bot.agentId, tombstonedAt: null }));
      const ev = ofType(events, 'task.created', t.id);
      expect(ev).toHaveLength(1);
      expect(ev[0].triggeredBy).toEqual({ source: 'agent', agentId: bot.agentId });
      // A second write reuses the actor; the human owner's update is a human's.
      const again = ok(await h.patch(`/tasks/${t.id}`, { name: 'renamed by the bot' }, { token: bot.token }));
      expect(again.updatedByActorId).toBe(t.createdByActorId);
      expect(again.updatedByActorType).toBe('agent');
      const human = ok(await h.patch(`/tasks/${t.id}`, { name: 'renamed by a person' }));
      expect(human.updatedByActorType).toBe('human');
      expect(human.createdByActorType).toBe('agent');
    });

    it("an automation's writes carry actor type automation (agentId and memberId null) and triggeredBy {source: system}", async () => {
      const h = H();
      const auto = await h.api.admin.createAgent({ teamId: h.a.id, name: 'Nightly sync', type: 'automation', scopes: ['write'] });
      expect(auto).toMatchObject({ type: 'automation', agentId: null });
      const { result, events } = await during(h, () => h.post('/labels', { name: 'Synced' }, { token: auto.token }));
      const label = ok(result, 201);
      expect(label.createdByActorType).toBe('automation');
      const actor = ok(await h.get(`/actors/${label.createdByActorId}`));
      expect(actor).toMatchObject({ type: 'automation', displayName: 'Nightly sync', memberId: null, agentId: null, tombstonedAt: null });
      expect(ofType(events, 'label.created', label.id)[0].triggeredBy).toEqual({ source: 'system' });
    });

    it('agents and automations are members of their own type: listed with type, filterable by type[eq|in], managed like members', async () => {
      const h = H();
      const bot = await h.api.admin.createAgent({ teamId: h.a.id, name: 'Listed bot', scopes: ['read'] });
      const auto = await h.api.admin.createAgent({ teamId: h.a.id, name: 'Listed automation', type: 'automation', role: 'client', scopes: ['read'] });
      expect(ok(await h.get(`/members/${bot.memberId}`))).toMatchObject({ type: 'agent', name: 'Listed bot', role: 'regular', active: true, email: null });
      expect(ok(await h.get(`/members/${auto.memberId}`))).toMatchObject({ type: 'automation', role: 'client' });
      const agents = ok(await h.get('/members?type[eq]=agent&limit=200')).data;
      expect(agents.map((m: any) => m.id)).toContain(bot.memberId);
      expect(agents.map((m: any) => m.id)).not.toContain(auto.memberId);
      expect(agents.every((m: any) => m.type === 'agent')).toBe(true);
      const both = ok(await h.get('/members?type[in]=agent,automation&limit=200')).data.map((m: any) => m.id);
      expect(both).toEqual(expect.arrayContaining([bot.memberId, auto.memberId]));
      const people = ok(await h.get('/members?type[eq]=human&limit=200')).data.map((m: any) => m.id);
      expect(people).toEqual(expect.arrayContaining([h.a.owner.id, h.a.regular.id, h.a.client.id]));
      expect(people).not.toContain(bot.memberId);
      expect(people).not.toContain(auto.memberId);
      // Deactivating an agent stops its credential.
      ok(await h.patch(`/members/${bot.memberId}`, { active: false }));
      expectProblem(await h.get('/tasks', { token: bot.token }), 401, 'token_owner_inactive');
    });

    it('an agent or automation managing tokens or members is 400 identity_rejected, whatever its role', async () => {
      const h = H();
      const bot = await h.api.admin.createAgent({ teamId: h.a.id, name: 'Manager bot', role: 'manager', scopes: ['read', 'write', 'delete'] });
      const auto = await h.api.admin.createAgent({ teamId: h.a.id, name: 'Manager automation', type: 'automation', role: 'manager', scopes: ['read', 'write', 'delete'] });
      for (const token of [bot.token, auto.token]) {
        const pat = expectProblem(await h.post('/personal-access-tokens', { name: 'mine', scopes: ['read'] }, { token }), 400, 'identity_rejected');
        expect(pat.allowed).toEqual(['human']);
        expectProblem(await h.patch(`/members/${h.a.regular.id}`, { active: false }, { token }), 400, 'identity_rejected');
        expectProblem(await h.patch(`/members/${h.a.client.id}`, { role: 'regular' }, { token }), 400, 'identity_rejected');
        expectProblem(await h.del(`/members/${h.a.client.id}`, { token }), 400, 'identity_rejected');
      }
      expect(ok(await h.get(`/members/${h.a.regular.id}`))).toMatchObject({ active: true, role: 'regular' });
      expect(ok(await h.get(`/members/${h.a.client.id}`))).toMatchObject({ role: 'client' });
      // Restoring a removed member is a person's decision too.
      const gone = await h.api.admin.addMember(h.a.id, { name: 'Removed by a person' });
      expect((await h.del(`/members/${gone.id}`)).status).toBe(204);
      expectProblem(await h.post(`/members/${gone.id}/restore`, undefined, { token: bot.token }), 400, 'identity_rejected');
      expectProblem(await h.get(`/members/${gone.id}`), 404, 'resource_not_found');
      const own = ok(await h.get('/personal-access-tokens', { token: bot.token }));
      expect(own.data.map((t: any) => t.id)).toEqual([bot.tokenId]);
      expectProblem(await h.del(`/personal-access-tokens/${bot.tokenId}`, { token: bot.token }), 400, 'identity_rejected');
      expectProblem(await h.patch(`/personal-access-tokens/${bot.tokenId}`, { name: 'renamed' }, { token: bot.token }), 400, 'identity_rejected');
      // The same operations are a person's to do.
      expect((await h.post('/personal-access-tokens', { name: 'mine', scopes: ['read'] }, { token: h.a.regular.token })).status).toBe(201);
    });

    it('an agent or automation creating, changing or deleting a role is 400 identity_rejected, whatever its role (a role is people\'s rights); reading roles is allowed', async () => {
      const h = H();
      const bot = await h.api.admin.createAgent({ teamId: h.a.id, name: 'Role bot', role: 'manager', scopes: ['read', 'write', 'delete'] });
      const auto = await h.api.admin.createAgent({ teamId: h.a.id, name: 'Role automation', type: 'automation', role: 'manager', scopes: ['read', 'write', 'delete'] });
      const role = ok(await h.post('/roles', { name: 'Agent-proof', permissions: ['tasks:read'] }), 201);
      for (const token of [bot.token, auto.token]) {
        expect(expectProblem(await h.post('/roles', { name: 'By a bot', permissions: ['tasks:read'] }, { token }), 400, 'identity_rejected').allowed).toEqual(['human']);
        expectProblem(await h.patch(`/roles/${role.id}`, { permissions: ['tasks:read', 'viewAllProjects'] }, { token }), 400, 'identity_rejected');
        expectProblem(await h.patch(`/roles/${h.a.roleIds.regular}`, { initialScreen: 'inbox' }, { token }), 400, 'identity_rejected');
        expectProblem(await h.del(`/roles/${role.id}`, { token }), 400, 'identity_rejected');
        expect(ok(await h.get(`/roles/${role.id}`, { token })).permissions).toEqual(['tasks:read']);
      }
      expect(ok(await h.get('/roles?name[eq]=By%20a%20bot')).data).toEqual([]);
      // A person holding the same role may.
      const mgr = await h.api.admin.addMember(h.a.id, { name: 'Role manager', role: 'manager' });
      const mgrTok = (await h.api.admin.issueToken(mgr.id, { scopes: ['read', 'write', 'delete'] })).token;
      expect(ok(await h.patch(`/roles/${role.id}`, { permissions: ['tasks:read', 'viewAllProjects'] }, { token: mgrTok })).permissions).toEqual(['tasks:read', 'viewAllProjects']);
    });

    it("a removed agent's credential answers token_owner_inactive; once purged its actor keeps its id with agentId null and tombstonedAt set", async () => {
      const h = H();
      const bot = await h.api.admin.createAgent({ teamId: h.a.id, name: 'Retired bot', scopes: ['write'] });
      const label = ok(await h.post('/labels', { name: 'By retired bot' }, { token: bot.token }), 201);
      expect((await h.del(`/members/${bot.memberId}`)).status).toBe(204);
      expectProblem(await h.get('/labels', { token: bot.token }), 401, 'token_owner_inactive');
      h.clock.advance(31 * 24 * 60 * 60 * 1000);
      await h.api.jobs.purge();
      const actor = ok(await h.get(`/actors/${label.createdByActorId}`));
      expect(actor).toMatchObject({ type: 'agent', displayName: 'Retired bot', agentId: null, memberId: null, tombstonedAt: iso(h.clock.now()) });
      expect(ok(await h.get(`/labels/${label.id}`)).createdByActorId).toBe(label.createdByActorId);
    });
  });
}
