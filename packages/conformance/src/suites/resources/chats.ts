import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, Member, Reply, StoreFactory } from '../../kit';
import { copyProjects, during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';
import { backfillDiscussionChats } from '@pmapi/core/sql';

/**
 * Chats and messages (spec "Chat", "Message", "Endpoints with extra rules":
 * POST /messages and POST /chats, "Events", "Limits": message text), with the
 * decisions taken where the spec is silent (docs/not-shown.md "Conversations
 * and files": who sees a chat, chat fields, member entries, direct chats and
 * the self-chat, muting, project discussion chats, deleting a chat, message
 * contexts, types, mentions, editing, files, lifecycle messages, annotation
 * threads).
 */

/** Limits of the spec and of docs/not-shown.md (kept here as data: tests never read the spec). */
const CHAT_NAME_MAX = 255;
const CHAT_DESCRIPTION_MAX = 5000;
const MESSAGE_TEXT_MAX = 655_350;
const MENTIONS_MAX = 100;
const AUDIO_MAX_SECONDS = 86_400;
/** memberIds holds at most 150 ids (docs/not-shown.md "Chat fields"). */
const MEMBER_IDS_MAX = 150;
/** Most characters of a message's text its events carry (docs/not-shown.md "Conversations and files"). */
const EVENT_TEXT_MAX = 100_000;
/** Most projects a workspace-wide list may span (spec "Limits"). */
const ACCESSIBLE_PROJECTS_MAX = 1000;
/** The four facts of a chat member entry (docs/not-shown.md "Chat member entries"). */
const MEMBER_ENTRY_KEYS = ['joinedAt', 'memberId', 'muted', 'owner'];
const HOUR = 3600 * 1000;
const ALL = ['read', 'write', 'delete'];

const ids = (r: Reply): string[] => ok(r).data.map((x: any) => x.id);
const byMember = (entries: any[]) => [...entries].sort((x, y) => (x.memberId < y.memberId ? -1 : 1));

/** Another member of workspace A, with a token holding every scope. */
async function newMember(h: Harness, name: string, role = 'regular'): Promise<Member> {
  const m = await h.api.admin.addMember(h.a.id, { name, role });
  const t = await h.api.admin.issueToken(m.id, { scopes: ALL });
  return { id: m.id, token: t.token };
}

export function chatsSuite(factory: StoreFactory): void {
  /** A group chat made by `token` (default a.owner). */
  const groupOf = (H: () => Harness) => async (body: Record<string, unknown> = {}, token?: string) =>
    ok(await H().post('/chats', { name: 'Room', ...body }, { token }), 201);
  /** A message posted by `token` (default a.owner). */
  const messageOf = (H: () => Harness) => async (body: Record<string, unknown>, token?: string) =>
    ok(await H().post('/messages', { text: 'Hello', ...body }, { token }), 201);
  const membersOf = async (H: () => Harness, chatId: string, token?: string) =>
    byMember(ok(await H().get(`/chats/${chatId}?expand=members`, { token })).members);

  describe(`[${factory.name}] v3 Chats: fields and writes (spec "Chat"; docs/not-shown.md "Chat fields", "Chat member entries")`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);

    it('POST /chats → 201 group chat: name trimmed, description kept, teamId the workspace, projectId and pinnedMessageId null; GET answers the same', async () => {
      const c = ok(await H().post('/chats', { name: '  Launch room \t', description: 'Where we launch' }), 201);
      expect(c).toMatchObject({
        type: 'group', name: 'Launch room', description: 'Where we launch', teamId: H().a.id, projectId: null, pinnedMessageId: null,
      });
      expect(typeof c.id).toBe('string');
      expect(ok(await H().get(`/chats/${c.id}`))).toEqual(c);
    });

    it('POST /chats creates group chats only (spec "Endpoints with extra rules"): type direct or project → 400 validation_failed on type (invalid_value); type group is accepted', async () => {
      invalid(await H().post('/chats', { name: 'D', type: 'direct' }), 'type', 'invalid_value');
      invalid(await H().post('/chats', { name: 'P', type: 'project' }), 'type', 'invalid_value');
      expect(ok(await H().post('/chats', { name: 'G', type: 'group' }), 201).type).toBe('group');
      expect(ids(await H().get('/chats?name[eq]=D&limit=200'))).toEqual([]);
    });

    it('name: required for a group chat (400 required), 1-255 characters after trimming; description at most 5,000 characters', async () => {
      invalid(await H().post('/chats', {}), 'name', 'required');
      invalid(await H().post('/chats', { description: 'No name' }), 'name', 'required');
      invalid(await H().post('/chats', { name: null }), 'name', 'required');
      invalid(await H().post('/chats', { name: '   ' }), 'name');
      invalid(await H().post('/chats', { name: 'n'.repeat(CHAT_NAME_MAX + 1) }), 'name', 'too_big');
      expect((await group({ name: 'n'.repeat(CHAT_NAME_MAX) })).name).toHaveLength(CHAT_NAME_MAX);
      invalid(await H().post('/chats', { name: 'Long', description: 'd'.repeat(CHAT_DESCRIPTION_MAX + 1) }), 'description', 'too_big');
      expect((await group({ description: 'd'.repeat(CHAT_DESCRIPTION_MAX) })).description).toHaveLength(CHAT_DESCRIPTION_MAX);
    });

    it('memberIds is write-only: never in the create answer, GET, list, expand or the chat.created payload', async () => {
      const { result, events } = await during(H(), () => H().post('/chats', { name: 'Hidden roster', memberIds: [H().a.regular.id] }));
      const c = ok(result, 201);
      expect(c).not.toHaveProperty('memberIds');
      expect(ok(await H().get(`/chats/${c.id}`))).not.toHaveProperty('memberIds');
      expect(ok(await H().get(`/chats/${c.id}?expand=members`))).not.toHaveProperty('memberIds');
      const listed = ok(await H().get('/chats?limit=200')).data.find((x: any) => x.id === c.id);
      expect(listed).toEqual(c);
      const [ev] = ofType(events, 'chat.created', c.id);
      expect(ev.payload.chat).not.toHaveProperty('memberIds');
      expect(ev.payload.chat).toEqual(c);
    });

    it('POST /chats?expand=members answers the member entries at once; the chat.created payload carries ids only', async () => {
      const { result, events } = await during(H(), () => H().post('/chats?expand=members', { name: 'Expanded', memberIds: [H().a.regular.id] }));
      const c = ok(result, 201);
      expect(byMember(c.members).map((e: any) => [e.memberId, e.owner])).toEqual(
        byMember([{ memberId: H().a.owner.id, owner: true }, { memberId: H().a.regular.id, owner: false }]).map((e) => [e.memberId, e.owner]),
      );
      expect(ofType(events, 'chat.created', c.id)[0].payload.chat).not.toHaveProperty('members');
    });

    it('expand=members: entries are exactly {memberId, owner, muted, joinedAt}; the creator is always a member and the only owner (also when left out of memberIds or listed twice)', async () => {
      const c = await group({ name: 'Roster', memberIds: [H().a.regular.id, H().a.client.id, H().a.regular.id] });
      const entries = await membersOf(H, c.id);
      for (const e of entries) expect(Object.keys(e).sort()).toEqual(MEMBER_ENTRY_KEYS);
      expect(entries).toEqual(byMember([
        { memberId: H().a.owner.id, owner: true, muted: false, joinedAt: c.createdAt },
        { memberId: H().a.regular.id, owner: false, muted: false, joinedAt: c.createdAt },
        { memberId: H().a.client.id, owner: false, muted: false, joinedAt: c.createdAt },
      ]));
      const solo = await group({ name: 'Solo' }, H().a.regular.token);
      expect(await membersOf(H, solo.id, H().a.regular.token)).toEqual([{ memberId: H().a.regular.id, owner: true, muted: false, joinedAt: solo.createdAt }]);
      const self = await group({ name: 'Self listed', memberIds: [H().a.owner.id, H().a.client.id] });
      expect((await membersOf(H, self.id)).map((e: any) => [e.memberId, e.owner])).toEqual(
        byMember([{ memberId: H().a.owner.id, owner: true }, { memberId: H().a.client.id, owner: false }]).map((e) => [e.memberId, e.owner]),
      );
    });

    it('memberIds naming an unknown member or a member of another workspace → 404 resource_not_found with field memberIds; nothing is created', async () => {
      const before = ids(await H().get('/chats?limit=200'));
      const unknown = problem(await H().post('/chats', { name: 'Ghosts', memberIds: ['nosuchmember'] }), 404, 'resource_not_found');
      expect(unknown.field).toBe('memberIds');
      const foreign = problem(await H().post('/chats', { name: 'Foreign', memberIds: [H().a.regular.id, H().b.owner.id] }), 404, 'resource_not_found');
      expect(foreign.field).toBe('memberIds');
      expect(ids(await H().get('/chats?limit=200'))).toEqual(before);
      // At most 150 members besides the creator's own entry.
      invalid(await H().post('/chats', { name: 'Crowd', memberIds: Array.from({ length: MEMBER_IDS_MAX + 1 }, (_, i) => `m${i}`) }), 'memberIds');
      expect(ids(await H().get('/chats?limit=200'))).toEqual(before);
    });

    it('membership cannot change after creation: PATCH memberIds → 400 immutable and the roster stays', async () => {
      const c = await group({ name: 'Fixed', memberIds: [H().a.regular.id] });
      invalid(await H().patch(`/chats/${c.id}`, { memberIds: [H().a.regular.id, H().a.client.id] }), 'memberIds', 'immutable');
      invalid(await H().patch(`/chats/${c.id}`, { memberIds: [] }), 'memberIds', 'immutable');
      expect((await membersOf(H, c.id)).map((e: any) => e.memberId).sort()).toEqual([H().a.owner.id, H().a.regular.id].sort());
      problem(await H().get(`/chats/${c.id}`, { token: H().a.client.token }), 404, 'resource_not_found');
    });

    it('update body name, description, expectedUpdatedAt: PATCH trims the name, answers and emits chat.updated with the full chat; a stale expectedUpdatedAt → 409 stale_write', async () => {
      const c = await group({ name: 'Before', memberIds: [H().a.regular.id] });
      H().clock.advance(1000);
      const { result, events } = await during(H(), () => H().patch(`/chats/${c.id}`, { name: '  After  ', description: 'New words', expectedUpdatedAt: c.updatedAt }));
      const after = ok(result);
      expect(after).toMatchObject({ id: c.id, name: 'After', description: 'New words', type: 'group' });
      expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(c.updatedAt));
      const [ev] = ofType(events, 'chat.updated', c.id);
      expect(ev).toMatchObject({ aggregateType: 'chat', aggregateId: c.id });
      expect(ev.payload.chat).toEqual(after);
      expect(ok(await H().get(`/chats/${c.id}`))).toEqual(after);
      problem(await H().patch(`/chats/${c.id}`, { name: 'Stale', expectedUpdatedAt: c.updatedAt }), 409, 'stale_write');
      expect(ok(await H().get(`/chats/${c.id}`)).name).toBe('After');
      // Any member of the chat may rename it.
      expect(ok(await H().patch(`/chats/${c.id}`, { description: null }, { token: H().a.regular.token })).description).toBeNull();
    });

    it('PATCH: a group chat\'s name cannot become null (400) or blank or longer than 255; description over 5,000 → too_big; an empty PATCH → 400 empty_update; type is fixed', async () => {
      const c = await group({ name: 'Keeps a name' });
      invalid(await H().patch(`/chats/${c.id}`, { name: null }), 'name');
      invalid(await H().patch(`/chats/${c.id}`, { name: '  ' }), 'name');
      invalid(await H().patch(`/chats/${c.id}`, { name: 'n'.repeat(CHAT_NAME_MAX + 1) }), 'name', 'too_big');
      invalid(await H().patch(`/chats/${c.id}`, { description: 'd'.repeat(CHAT_DESCRIPTION_MAX + 1) }), 'description', 'too_big');
      problem(await H().patch(`/chats/${c.id}`, {}), 400, 'empty_update');
      invalid(await H().patch(`/chats/${c.id}`, { type: 'direct' }), 'type', 'immutable');
      expect(ok(await H().get(`/chats/${c.id}`)).name).toBe('Keeps a name');
    });

    it('lastMessageAt: null on a chat without messages; each new message sets it to that message\'s createdAt without changing updatedAt and without chat.updated', async () => {
      const self = ok(await H().post('/chats/self'), 201);
      expect(self.lastMessageAt).toBeNull();
      H().clock.advance(5000);
      const first = await message({ chatId: self.id, text: 'note to self' });
      const afterFirst = ok(await H().get(`/chats/${self.id}`));
      expect(afterFirst.lastMessageAt).toBe(first.createdAt);
      expect(afterFirst.updatedAt).toBe(self.updatedAt);

      const c = await group({ name: 'Busy', memberIds: [H().a.regular.id] });
      H().clock.advance(60_000);
      const { result, events } = await during(H(), () => H().post('/messages', { chatId: c.id, text: 'ping' }, { token: H().a.regular.token }));
      const m = ok(result, 201);
      expect(m.createdAt).not.toBe(c.createdAt);
      const now = ok(await H().get(`/chats/${c.id}`));
      expect(now.lastMessageAt).toBe(m.createdAt);
      expect(now.updatedAt).toBe(c.updatedAt);
      expect(ofType(events, 'chat.updated')).toEqual([]);
      expect(ofType(events, 'message.created', m.id)).toHaveLength(1);
    });
  });

  describe(`[${factory.name}] v3 Chats: who sees a chat, filters and default sort (docs/not-shown.md "Who sees a chat"; spec "Chat" filters)`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);

    it('a non-member — the workspace owner included — and a member of workspace B get 404 on GET, PATCH, DELETE and mute, never list it, and cannot post in it', async () => {
      const c = await group({ name: 'Private talk', memberIds: [H().a.client.id] }, H().a.regular.token);
      for (const token of [H().a.owner.token, H().b.owner.token]) {
        problem(await H().get(`/chats/${c.id}`, { token }), 404, 'resource_not_found');
        problem(await H().patch(`/chats/${c.id}`, { name: 'Peek' }, { token }), 404, 'resource_not_found');
        problem(await H().del(`/chats/${c.id}`, { token }), 404, 'resource_not_found');
        problem(await H().post(`/chats/${c.id}/mute`, undefined, { token }), 404, 'resource_not_found');
        expect(ids(await H().get('/chats?limit=200', { token }))).not.toContain(c.id);
        expect(ids(await H().get('/chats?name[eq]=Private%20talk', { token }))).toEqual([]);
        problem(await H().post('/messages', { chatId: c.id, text: 'let me in' }, { token }), 404, 'resource_not_found');
      }
      expect(ok(await H().get(`/chats/${c.id}`, { token: H().a.client.token })).name).toBe('Private talk');
      expect(ids(await H().get('/chats?limit=200', { token: H().a.client.token }))).toContain(c.id);
      expect(ok(await H().get(`/chats/${c.id}`, { token: H().a.regular.token })).name).toBe('Private talk');
    });

    it('a chat is expanded to null for a non-member: expand=discussionChat on a project the workspace owner opens but whose discussion it is not in', async () => {
      const p = await H().project({ name: 'Regular\'s project', members: [H().a.regular.id] }, H().a.regular.token);
      const asOwner = ok(await H().get(`/projects/${p.id}?expand=discussionChat`));
      expect(asOwner.discussionChatId).toBe(p.discussionChatId);
      expect(asOwner.discussionChat).toBeNull();
      const asMember = ok(await H().get(`/projects/${p.id}?expand=discussionChat`, { token: H().a.regular.token }));
      expect(asMember.discussionChat).toMatchObject({ id: p.discussionChatId, type: 'project', projectId: p.id });
    });

    it('filters name[eq|contains|startsWith] (case-insensitive for contains and startsWith) and type[eq|in]', async () => {
      const alpha = await group({ name: 'Filter Alpha' });
      const beta = await group({ name: 'Filter beta room' });
      const selfReply = await H().post('/chats/self');
      expect([200, 201], JSON.stringify(selfReply.body)).toContain(selfReply.status);
      const self = selfReply.body;
      expect(ids(await H().get('/chats?name[eq]=Filter%20Alpha'))).toEqual([alpha.id]);
      expect(ids(await H().get('/chats?name[contains]=BETA'))).toEqual([beta.id]);
      expect(ids(await H().get('/chats?name[startsWith]=filter&limit=200')).sort()).toEqual([alpha.id, beta.id].sort());
      const direct = ids(await H().get('/chats?type[eq]=direct&limit=200'));
      expect(direct).toContain(self.id);
      expect(direct).not.toContain(alpha.id);
      const groups = ids(await H().get('/chats?type[eq]=group&limit=200'));
      expect(groups).toEqual(expect.arrayContaining([alpha.id, beta.id]));
      expect(groups).not.toContain(self.id);
      expect(ids(await H().get('/chats?type[in]=group,direct&limit=200'))).toEqual(expect.arrayContaining([alpha.id, beta.id, self.id]));
      expect(ids(await H().get('/chats?type[eq]=project&limit=200'))).toEqual([]);
    });

    it('filters lastMessageAt[gt|gte|lt|lte] and createdAt[gt|gte|lt|lte]', async () => {
      const early = await group({ name: 'Range early' });
      H().clock.advance(HOUR);
      const late = await group({ name: 'Range late' });
      H().clock.advance(HOUR);
      const m = await message({ chatId: early.id, text: 'bump' });
      const get = async (f: string) => ids(await H().get(`/chats?name[startsWith]=Range&${f}&limit=200`));
      expect(await get(`lastMessageAt[gte]=${m.createdAt}`)).toEqual([early.id]);
      expect(await get(`lastMessageAt[gt]=${m.createdAt}`)).toEqual([]);
      expect(await get(`lastMessageAt[lt]=${m.createdAt}`)).toEqual([late.id]);
      expect((await get(`lastMessageAt[lte]=${m.createdAt}`)).sort()).toEqual([early.id, late.id].sort());
      expect(await get(`createdAt[gt]=${early.createdAt}`)).toEqual([late.id]);
      expect(await get(`createdAt[lte]=${early.createdAt}`)).toEqual([early.id]);
      expect(await get(`createdAt[lt]=${late.createdAt}`)).toEqual([early.id]);
      expect((await get(`createdAt[gte]=${early.createdAt}`)).sort()).toEqual([early.id, late.id].sort());
    });

    it('default sort is lastMessageAt ascending, chats without messages last; -lastMessageAt puts them first', async () => {
      const m = await newMember(H(), 'Sorter');
      const self = ok(await H().post('/chats/self', undefined, { token: m.token }), 201);
      const first = await group({ name: 'Sort one' }, m.token);
      H().clock.advance(HOUR);
      const second = await group({ name: 'Sort two' }, m.token);
      H().clock.advance(HOUR);
      await message({ chatId: first.id, text: 'latest' }, m.token);
      expect(ids(await H().get('/chats', { token: m.token }))).toEqual([second.id, first.id, self.id]);
      expect(ids(await H().get('/chats?sort=-lastMessageAt', { token: m.token }))).toEqual([self.id, first.id, second.id]);
      // Page by page (limit 1) across the null boundary, both directions.
      for (const [sort, want] of [['', [second.id, first.id, self.id]], ['&sort=-lastMessageAt', [self.id, first.id, second.id]]] as const) {
        const seen: string[] = [];
        let page = ok(await H().get(`/chats?limit=1${sort}`, { token: m.token }));
        seen.push(...page.data.map((x: any) => x.id));
        while (page.hasMore) {
          page = ok(await H().get(`/chats?limit=1&cursor=${encodeURIComponent(page.nextCursor)}`, { token: m.token }));
          seen.push(...page.data.map((x: any) => x.id));
        }
        expect(seen, sort || 'default').toEqual(want);
      }
    });
  });

  describe(`[${factory.name}] v3 Chats: direct chats, the self-chat and muting (spec "Message": recipientMemberId; docs/not-shown.md "Direct chats and the self-chat", "Muting")`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);

    it('POST /messages with recipientMemberId creates the 1:1 chat once (chat.created once) and reuses it for the next message and for the answer sent back', async () => {
      const first = await during(H(), () => H().post('/messages', { recipientMemberId: H().a.regular.id, text: 'Hi there' }));
      const m1 = ok(first.result, 201);
      expect(typeof m1.chatId).toBe('string');
      expect(m1).not.toHaveProperty('recipientMemberId');
      const created = ofType(first.events, 'chat.created');
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ aggregateType: 'chat', aggregateId: m1.chatId });
      expect(created[0].payload.chat).toMatchObject({ id: m1.chatId, type: 'direct', name: null });
      const second = await during(H(), () => H().post('/messages', { recipientMemberId: H().a.regular.id, text: 'Again' }));
      expect(ok(second.result, 201).chatId).toBe(m1.chatId);
      expect(ofType(second.events, 'chat.created')).toEqual([]);
      const back = await during(H(), () => H().post('/messages', { recipientMemberId: H().a.owner.id, text: 'Hello back' }, { token: H().a.regular.token }));
      expect(ok(back.result, 201).chatId).toBe(m1.chatId);
      expect(ofType(back.events, 'chat.created')).toEqual([]);
      expect(ids(await H().get(`/messages?chatId[eq]=${m1.chatId}`, { token: H().a.regular.token })).length).toBe(3);
    });

    it('a direct chat: type direct, name null, both members owners; PATCH name → 400 not_allowed; a third member gets 404', async () => {
      const m = ok(await H().post('/messages', { recipientMemberId: H().a.client.id, text: 'Direct' }, { token: H().a.regular.token }), 201);
      const c = ok(await H().get(`/chats/${m.chatId}`, { token: H().a.client.token }));
      expect(c).toMatchObject({ type: 'direct', name: null, projectId: null });
      expect((await membersOf(H, c.id, H().a.client.token)).map((e: any) => ({ memberId: e.memberId, owner: e.owner, muted: e.muted }))).toEqual(
        byMember([{ memberId: H().a.regular.id, owner: true, muted: false }, { memberId: H().a.client.id, owner: true, muted: false }]),
      );
      invalid(await H().patch(`/chats/${c.id}`, { name: 'Named' }, { token: H().a.regular.token }), 'name', 'not_allowed');
      expect(ok(await H().get(`/chats/${c.id}`, { token: H().a.regular.token })).name).toBeNull();
      problem(await H().get(`/chats/${c.id}`), 404, 'resource_not_found');
    });

    it('recipientMemberId: the caller → 400 validation_failed on recipientMemberId; unknown or another workspace\'s member → 404 resource_not_found with field recipientMemberId', async () => {
      invalid(await H().post('/messages', { recipientMemberId: H().a.owner.id, text: 'me' }), 'recipientMemberId');
      const unknown = problem(await H().post('/messages', { recipientMemberId: 'nosuchmember', text: 'x' }), 404, 'resource_not_found');
      expect(unknown.field).toBe('recipientMemberId');
      const foreign = problem(await H().post('/messages', { recipientMemberId: H().b.owner.id, text: 'x' }), 404, 'resource_not_found');
      expect(foreign.field).toBe('recipientMemberId');
    });

    it('recipientMemberId[eq]=X lists the caller\'s direct chats with X, nothing else', async () => {
      const m = await newMember(H(), 'Direct filter');
      const withOwner = ok(await H().post('/messages', { recipientMemberId: H().a.owner.id, text: 'a' }, { token: m.token }), 201).chatId;
      const withRegular = ok(await H().post('/messages', { recipientMemberId: H().a.regular.id, text: 'b' }, { token: m.token }), 201).chatId;
      const self = ok(await H().post('/chats/self', undefined, { token: m.token }), 201);
      await group({ name: 'Group with owner', memberIds: [H().a.owner.id] }, m.token);
      expect(ids(await H().get(`/chats?recipientMemberId[eq]=${H().a.owner.id}`, { token: m.token }))).toEqual([withOwner]);
      expect(ids(await H().get(`/chats?recipientMemberId[eq]=${H().a.regular.id}`, { token: m.token }))).toEqual([withRegular]);
      expect(ids(await H().get(`/chats?recipientMemberId[eq]=${H().a.client.id}`, { token: m.token }))).toEqual([]);
      // Another member's direct chats stay theirs.
      expect(ids(await H().get(`/chats?recipientMemberId[eq]=${m.id}`, { token: H().a.client.token }))).toEqual([]);
      expect(ids(await H().get(`/chats?recipientMemberId[eq]=${m.id}`, { token: H().a.owner.token }))).toEqual([withOwner]);
      // The caller's direct chat with themself is the self-chat alone, not every direct chat the caller is in.
      expect(ids(await H().get(`/chats?recipientMemberId[eq]=${m.id}`, { token: m.token }))).toEqual([self.id]);
    });

    it('two first messages of a pair at once still make one direct chat (one chat.created)', async () => {
      const x = await newMember(H(), 'Race X');
      const y = await newMember(H(), 'Race Y');
      const { result, events } = await during(H(), () => Promise.all([
        H().post('/messages', { recipientMemberId: y.id, text: 'from x' }, { token: x.token }),
        H().post('/messages', { recipientMemberId: x.id, text: 'from y' }, { token: y.token }),
      ]));
      const [a, b] = result.map((r) => ok(r, 201));
      expect(a.chatId).toBe(b.chatId);
      expect(ofType(events, 'chat.created')).toHaveLength(1);
      expect(ids(await H().get(`/chats?recipientMemberId[eq]=${y.id}`, { token: x.token }))).toEqual([a.chatId]);
    });

    it('a deactivated member cannot be a recipient or a chat member (400 on recipientMemberId / memberIds)', async () => {
      const gone = await newMember(H(), 'Gone');
      await H().api.admin.setMemberActive(gone.id, false);
      invalid(await H().post('/messages', { recipientMemberId: gone.id, text: 'anyone?' }), 'recipientMemberId');
      invalid(await H().post('/chats', { name: 'With a ghost', memberIds: [gone.id] }), 'memberIds');
    });

    it('POST /chats/self: 201 with chat.created the first time, 200 with the same chat afterwards; type direct, name null, one member who owns it', async () => {
      const m = await newMember(H(), 'Self');
      const first = await during(H(), () => H().post('/chats/self', undefined, { token: m.token }));
      const c = ok(first.result, 201);
      expect(c).toMatchObject({ type: 'direct', name: null, projectId: null, teamId: H().a.id, lastMessageAt: null });
      expect(ofType(first.events, 'chat.created', c.id)).toHaveLength(1);
      expect(ofType(first.events, 'chat.created', c.id)[0].payload.chat).toEqual(c);
      const again = await during(H(), () => H().post('/chats/self', {}, { token: m.token }));
      expect(ok(again.result, 200)).toEqual(c);
      expect(again.events).toEqual([]);
      expect(await membersOf(H, c.id, m.token)).toEqual([{ memberId: m.id, owner: true, muted: false, joinedAt: c.createdAt }]);
      problem(await H().get(`/chats/${c.id}`), 404, 'resource_not_found');
      // Each member has a self-chat of their own.
      const ownerSelf = await H().post('/chats/self');
      expect([200, 201], JSON.stringify(ownerSelf.body)).toContain(ownerSelf.status);
      expect(ownerSelf.body.id).not.toBe(c.id);
    });

    it('POST /chats/self takes no body: any key or a non-object → 400 validation_failed', async () => {
      problem(await H().post('/chats/self', { name: 'Mine' }), 400, 'validation_failed');
      problem(await H().post('/chats/self', []), 400, 'validation_failed');
      problem(await H().post('/chats/self', 'x'), 400, 'validation_failed');
    });

    it('mute / unmute flip only the caller\'s muted flag, answer the chat and emit no event; a non-member or another workspace gets 404', async () => {
      const c = await group({ name: 'Noisy', memberIds: [H().a.regular.id, H().a.client.id] });
      const muted = await during(H(), () => H().post(`/chats/${c.id}/mute`, undefined, { token: H().a.regular.token }));
      expect(ok(muted.result).id).toBe(c.id);
      expect(muted.events).toEqual([]);
      const flags = async () => Object.fromEntries((await membersOf(H, c.id)).map((e: any) => [e.memberId, e.muted]));
      expect(await flags()).toEqual({ [H().a.owner.id]: false, [H().a.regular.id]: true, [H().a.client.id]: false });
      expect(ok(await H().get(`/chats/${c.id}`)).updatedAt).toBe(c.updatedAt);
      ok(await H().post(`/chats/${c.id}/mute`, undefined, { token: H().a.regular.token }));
      expect(await flags()).toEqual({ [H().a.owner.id]: false, [H().a.regular.id]: true, [H().a.client.id]: false });
      const unmuted = await during(H(), () => H().post(`/chats/${c.id}/unmute`, {}, { token: H().a.regular.token }));
      expect(ok(unmuted.result).id).toBe(c.id);
      expect(unmuted.events).toEqual([]);
      expect(await flags()).toEqual({ [H().a.owner.id]: false, [H().a.regular.id]: false, [H().a.client.id]: false });
      const other = await group({ name: 'Not yours' });
      problem(await H().post(`/chats/${other.id}/mute`, undefined, { token: H().a.regular.token }), 404, 'resource_not_found');
      problem(await H().post(`/chats/${other.id}/unmute`, undefined, { token: H().a.regular.token }), 404, 'resource_not_found');
      problem(await H().post(`/chats/${c.id}/mute`, undefined, { token: H().b.owner.token }), 404, 'resource_not_found');
      problem(await H().post('/chats/nosuchchat/mute'), 404, 'resource_not_found');
      problem(await H().post(`/chats/${c.id}/mute`, { muted: true }, { token: H().a.regular.token }), 400, 'validation_failed');
    });
  });

  describe(`[${factory.name}] v3 Chats: project discussion chats (spec "Chat" type project, "Project" discussionChatId; docs/not-shown.md "Project discussion chats")`, () => {
    const H = harnessPerDescribe(factory);
    const message = messageOf(H);

    it('a project created without modules has a discussion chat; the chat endpoints never serve it (GET/PATCH/DELETE/mute 404, not listed), even to the project owner', async () => {
      const p = await H().project({ name: 'Discuss', members: [H().a.regular.id] });
      expect(typeof p.discussionChatId).toBe('string');
      const dc = p.discussionChatId;
      for (const token of [H().a.owner.token, H().a.regular.token]) {
        problem(await H().get(`/chats/${dc}`, { token }), 404, 'resource_not_found');
        problem(await H().patch(`/chats/${dc}`, { description: 'x' }, { token }), 404, 'resource_not_found');
        problem(await H().del(`/chats/${dc}`, { token }), 404, 'resource_not_found');
        expect(ids(await H().get('/chats?limit=200', { token }))).not.toContain(dc);
        expect(ids(await H().get('/chats?type[eq]=project&limit=200', { token }))).toEqual([]);
      }
      problem(await H().post(`/chats/${dc}/mute`, undefined, { token: H().a.regular.token }), 404, 'resource_not_found');
    });

    it('a project made before discussion chats existed gets its chat from the migration (members: owner and roster), once; one without the module gets none', async () => {
      const h = H();
      const p = await h.project({ name: 'Old project', members: [h.a.regular.id] });
      const quiet = await h.project({ name: 'Old quiet project', modules: ['tasks'] });
      expect(quiet.discussionChatId).toBeNull();
      // As a database from before migration 0009 holds it: no chat, no links, no discussionChatId.
      await h.store.db.deleteFrom('links').where('parent_id', '=', p.discussionChatId).execute();
      await h.store.db.deleteFrom('chats').where('id', '=', p.discussionChatId).execute();
      await h.store.db.updateTable('projects').set({ discussion_chat_id: null }).where('id', '=', p.id).execute();
      expect(ok(await h.get(`/projects/${p.id}`)).discussionChatId).toBeNull();
      const made = await backfillDiscussionChats(h.store.db, h.store.dialect);
      expect(made).toBeGreaterThanOrEqual(1);
      const dc = ok(await h.get(`/projects/${p.id}`)).discussionChatId;
      expect(dc).toBeTypeOf('string');
      expect(dc).not.toBe(p.discussionChatId);
      expect(ok(await h.get(`/projects/${quiet.id}`)).discussionChatId).toBeNull();
      const m = await message({ chatId: dc, text: 'Back in business' }, h.a.regular.token);
      expect(ids(await h.get(`/messages?chatId[eq]=${dc}`))).toEqual([m.id]);
      problem(await h.post('/messages', { chatId: dc, text: 'Not mine' }, { token: h.a.client.token }), 404, 'resource_not_found');
      expect(await backfillDiscussionChats(h.store.db, h.store.dialect)).toBe(0);
      expect(ok(await h.get(`/projects/${p.id}`)).discussionChatId).toBe(dc);
    });

    it('project members post to it with chatId and read its messages with chatId[eq]; expand=discussionChat shows it to them (owner: the project owner)', async () => {
      const p = await H().project({ name: 'Talkative', members: [H().a.regular.id] });
      const dc = p.discussionChatId;
      const m = await message({ chatId: dc, text: 'Kick-off' }, H().a.regular.token);
      expect(m.chatId).toBe(dc);
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`))).toEqual([m.id]);
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`, { token: H().a.regular.token }))).toEqual([m.id]);
      expect(ok(await H().get(`/messages/${m.id}`)).text).toBe('Kick-off');
      const shown = ok(await H().get(`/projects/${p.id}?expand=discussionChat`, { token: H().a.regular.token })).discussionChat;
      expect(shown).toMatchObject({ id: dc, type: 'project', projectId: p.id, teamId: H().a.id });
      expect(shown).not.toHaveProperty('memberIds');
    });

    it('a workspace member outside the project gets 404 posting there and sees none of its messages', async () => {
      const p = await H().project({ name: 'Closed talk', members: [H().a.regular.id] });
      const dc = p.discussionChatId;
      const m = await message({ chatId: dc, text: 'Members only' });
      const outsider = await newMember(H(), 'Outsider');
      problem(await H().post('/messages', { chatId: dc, text: 'hi?' }, { token: outsider.token }), 404, 'resource_not_found');
      problem(await H().get(`/messages/${m.id}`, { token: outsider.token }), 404, 'resource_not_found');
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`, { token: outsider.token }))).toEqual([]);
      expect(ids(await H().get('/messages?limit=200', { token: outsider.token }))).not.toContain(m.id);
    });

    it('the discussion follows the roster: POST /projects/{id}/members lets a member in, DELETE takes them out; a PATCH members replace does the same', async () => {
      const p = await H().project({ name: 'Roster talk', members: [H().a.regular.id] });
      const dc = p.discussionChatId;
      const m = await message({ chatId: dc, text: 'Before you came' });
      const x = await newMember(H(), 'Joiner');
      problem(await H().post('/messages', { chatId: dc, text: 'x' }, { token: x.token }), 404, 'resource_not_found');
      ok(await H().post(`/projects/${p.id}/members`, { ids: [x.id] }));
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`, { token: x.token }))).toEqual([m.id]);
      const mine = await message({ chatId: dc, text: 'Now I am in' }, x.token);
      expect(ok(await H().get(`/projects/${p.id}?expand=discussionChat`, { token: x.token })).discussionChat?.id).toBe(dc);
      ok(await H().del(`/projects/${p.id}/members`, { body: { ids: [x.id] } }));
      problem(await H().get(`/messages/${mine.id}`, { token: x.token }), 404, 'resource_not_found');
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`, { token: x.token }))).toEqual([]);
      problem(await H().post('/messages', { chatId: dc, text: 'x' }, { token: x.token }), 404, 'resource_not_found');

      const y = await newMember(H(), 'Replaced in');
      ok(await H().patch(`/projects/${p.id}`, { members: [H().a.regular.id, y.id] }));
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`, { token: y.token })).sort()).toEqual([m.id, mine.id].sort());
      ok(await H().patch(`/projects/${p.id}`, { members: [H().a.regular.id] }));
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`, { token: y.token }))).toEqual([]);
      // The project's owner stays in its discussion whatever the roster says.
      ok(await H().patch(`/projects/${p.id}`, { members: [] }));
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`)).length).toBe(2);
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`, { token: H().a.regular.token }))).toEqual([]);
    });

    it('the discussion\'s members are the project\'s owner (its owner) and roster: expand=discussionChat.members; the workspace owner outside the roster sees none of its messages', async () => {
      const p = await H().project({ name: 'Owned talk', members: [H().a.client.id] }, H().a.regular.token);
      const dc = p.discussionChatId;
      const shown = ok(await H().get(`/projects/${p.id}?expand=discussionChat.members`, { token: H().a.regular.token })).discussionChat;
      expect(byMember(shown.members).map((e: any) => [e.memberId, e.owner])).toEqual(
        byMember([{ memberId: H().a.regular.id, owner: true }, { memberId: H().a.client.id, owner: false }]).map((e) => [e.memberId, e.owner]),
      );
      const m = await message({ chatId: dc, text: 'Not for the boss' }, H().a.client.token);
      problem(await H().get(`/messages/${m.id}`), 404, 'resource_not_found');
      expect(ids(await H().get(`/messages?chatId[eq]=${dc}`))).toEqual([]);
      problem(await H().post('/messages', { chatId: dc, text: 'boss here' }), 404, 'resource_not_found');
    });

    it('purging the project destroys its discussion chat and its messages', async () => {
      const p = await H().project({ name: 'Purged talk' });
      const m = await message({ chatId: p.discussionChatId, text: 'Last words' });
      ok(await H().del(`/projects/${p.id}`), 204);
      H().clock.advance(31 * 24 * HOUR);
      await H().api.jobs.purge();
      problem(await H().get(`/messages/${m.id}`), 404, 'resource_not_found');
      expect(ids(await H().get('/messages?purgeAt[notNull]=true&limit=200'))).not.toContain(m.id);
      problem(await H().post('/messages', { chatId: p.discussionChatId, text: 'echo' }), 404, 'resource_not_found');
    });

    it('a project whose modules leave out discussion has discussionChatId null', async () => {
      const p = await H().project({ name: 'No talk', modules: ['tasks', 'documents'] });
      expect(p.discussionChatId).toBeNull();
      expect(ok(await H().get(`/projects/${p.id}?expand=discussionChat`)).discussionChat).toBeNull();
      const q = await H().project({ name: 'Talk module', modules: ['discussion'] });
      expect(typeof q.discussionChatId).toBe('string');
    });
  });

  describe(`[${factory.name}] v3 Chats: deleting a chat (spec "Chat": deleting a chat deletes all its messages; docs/not-shown.md "Deleting a chat")`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);

    it('only an owner deletes: a member who is not owner → 403 permission_denied and nothing changes', async () => {
      const c = await group({ name: 'Owned', memberIds: [H().a.regular.id] });
      problem(await H().del(`/chats/${c.id}`, { token: H().a.regular.token }), 403, 'permission_denied');
      expect(ok(await H().get(`/chats/${c.id}`)).id).toBe(c.id);
      const direct = ok(await H().post('/messages', { recipientMemberId: H().a.regular.id, text: 'x' }), 201).chatId;
      // Both members of a direct chat own it: the recipient may delete it too.
      ok(await H().del(`/chats/${direct}`, { token: H().a.regular.token }), 204);
      problem(await H().get(`/chats/${direct}`), 404, 'resource_not_found');
    });

    it('DELETE → 204: chat.removed, and every message (hello, replies and trashed ones too) goes with message.removed; files attached go too', async () => {
      const c = await group({ name: 'Doomed', memberIds: [H().a.regular.id] });
      const hello = ids(await H().get(`/messages?chatId[eq]=${c.id}`));
      expect(hello).toHaveLength(1);
      const m1 = await message({ chatId: c.id, text: 'one' });
      const m2 = await message({ chatId: c.id, text: 'two' }, H().a.regular.token);
      const reply = await message({ parentMessageId: m1.id, text: 'reply' }, H().a.regular.token);
      const trashed = await message({ chatId: c.id, text: 'gone already' });
      ok(await H().del(`/messages/${trashed.id}`), 204);
      const f = ok(await H().upload('attached bytes', { name: 'attached.txt', messageId: m1.id }), 201);
      const { result, events } = await during(H(), () => H().del(`/chats/${c.id}`));
      ok(result, 204);
      const [ev] = ofType(events, 'chat.removed', c.id);
      expect(ev).toMatchObject({ aggregateType: 'chat', aggregateId: c.id });
      expect(ev.payload.chat.id).toBe(c.id);
      const removed = ofType(events, 'message.removed').map((e) => e.aggregateId).sort();
      expect(removed).toEqual([...hello, m1.id, m2.id, reply.id, trashed.id].sort());
      for (const e of ofType(events, 'message.removed')) expect(e.payload.message.id).toBe(e.aggregateId);
      problem(await H().get(`/chats/${c.id}`), 404, 'resource_not_found');
      for (const id of [m1.id, m2.id, reply.id, ...hello]) problem(await H().get(`/messages/${id}`), 404, 'resource_not_found');
      problem(await H().post(`/messages/${trashed.id}/restore`), 404, 'resource_not_found');
      expect(ids(await H().get('/messages?purgeAt[notNull]=true&limit=200'))).not.toContain(trashed.id);
      problem(await H().get(`/files/${f.id}`), 404, 'resource_not_found');
      expect(ofType(events, 'file.removed', f.id)).toHaveLength(1);
    });
  });

  describe(`[${factory.name}] v3 Messages: contexts, types and limits (spec "Message"; docs/not-shown.md "Message contexts", "Message types")`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);
    let p: any;
    let c: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Msg P', members: [H().a.regular.id, H().a.client.id] });
      c = await group({ name: 'Msg room', memberIds: [H().a.regular.id] });
    });

    it('POST /messages → 201: text type by default, isEdited false, authorId the caller, subtype null, teamId set, hideLinkPreview false; GET answers the same', async () => {
      const { result, events } = await during(H(), () => H().post('/messages', { chatId: c.id, text: 'First words' }));
      const m = ok(result, 201);
      expect(m).toMatchObject({
        chatId: c.id, text: 'First words', type: 'text', isEdited: false, authorId: H().a.owner.id, subtype: null, teamId: H().a.id,
        hideLinkPreview: false, taskId: null, documentId: null, fileId: null, annotationId: null, parentMessageId: null, purgeAt: null,
      });
      expect(ok(await H().get(`/messages/${m.id}`))).toEqual(m);
      const [ev] = ofType(events, 'message.created', m.id);
      expect(ev).toMatchObject({ aggregateType: 'message', aggregateId: m.id });
      expect(ev.payload.message).toEqual(m);
    });

    it('zero contexts → 400 validation_failed with code context_required (on chatId)', async () => {
      invalid(await H().post('/messages', { text: 'Nowhere' }), 'chatId', 'context_required');
      invalid(await H().post('/messages', { text: 'Nowhere', chatId: null }), 'chatId', 'context_required');
    });

    it('two contexts → one_context on each field given; fileId with annotationId is the one legal pair', async () => {
      const t = await H().task(p.id);
      const r = await H().post('/messages', { text: 'Both', chatId: c.id, taskId: t.id });
      invalid(r, 'chatId', 'one_context');
      invalid(r, 'taskId', 'one_context');
      const d = ok(await H().post('/documents', { title: 'Ctx doc', projectId: p.id }), 201);
      const r2 = await H().post('/messages', { text: 'Three', taskId: t.id, documentId: d.id, recipientMemberId: H().a.regular.id });
      for (const field of ['taskId', 'documentId', 'recipientMemberId']) invalid(r2, field, 'one_context');
      const f = ok(await H().upload('png bytes', { name: 'pair.png', projectId: p.id }), 201);
      const a = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }), 201);
      const m = await message({ fileId: f.id, annotationId: a.id, text: 'On the spot' });
      expect(m).toMatchObject({ fileId: f.id, annotationId: a.id });
      const r3 = await H().post('/messages', { text: 'x', fileId: f.id, taskId: t.id });
      invalid(r3, 'fileId', 'one_context');
      invalid(r3, 'taskId', 'one_context');
    });

    it('an annotation of another file → 400 wrong_file on annotationId', async () => {
      const f1 = ok(await H().upload('one', { name: 'one.png', projectId: p.id }), 201);
      const f2 = ok(await H().upload('two', { name: 'two.png', projectId: p.id }), 201);
      const a2 = ok(await H().post('/annotations', { type: 'image', fileId: f2.id, position: {} }), 201);
      invalid(await H().post('/messages', { text: 'Mismatch', fileId: f1.id, annotationId: a2.id }), 'annotationId', 'wrong_file');
      expect(ids(await H().get(`/messages?fileId[eq]=${f1.id}`))).toEqual([]);
    });

    it('every context resolves: an unknown or another workspace\'s chatId, taskId, documentId, fileId, parentMessageId → 404 resource_not_found', async () => {
      for (const field of ['chatId', 'taskId', 'documentId', 'fileId', 'annotationId', 'parentMessageId']) {
        problem(await H().post('/messages', { text: 'x', [field]: 'nosuchrecord' }), 404, 'resource_not_found');
      }
      const bc = ok(await H().post('/chats', { name: 'B room' }, { token: H().b.owner.token }), 201);
      problem(await H().post('/messages', { text: 'x', chatId: bc.id }), 404, 'resource_not_found');
      const bp = ok(await H().post('/projects', { name: 'B msg' }, { token: H().b.owner.token }), 201);
      const bt = ok(await H().post('/tasks', { name: 'B task', projectId: bp.id }, { token: H().b.owner.token }), 201);
      problem(await H().post('/messages', { text: 'x', taskId: bt.id }), 404, 'resource_not_found');
    });

    it('contexts are fixed at creation: PATCH chatId, taskId, documentId, fileId, parentMessageId → 400 immutable; the same value is accepted', async () => {
      const t = await H().task(p.id);
      const m = await message({ chatId: c.id, text: 'Stay' });
      const other = await group({ name: 'Elsewhere' });
      invalid(await H().patch(`/messages/${m.id}`, { chatId: other.id }), 'chatId', 'immutable');
      invalid(await H().patch(`/messages/${m.id}`, { taskId: t.id }), 'taskId', 'immutable');
      invalid(await H().patch(`/messages/${m.id}`, { parentMessageId: m.id }), 'parentMessageId', 'immutable');
      const tm = await message({ taskId: t.id, text: 'On task' });
      invalid(await H().patch(`/messages/${tm.id}`, { taskId: null }), 'taskId', 'immutable');
      invalid(await H().patch(`/messages/${tm.id}`, { chatId: c.id }), 'chatId', 'immutable');
      expect(ok(await H().get(`/messages/${tm.id}`))).toMatchObject({ taskId: t.id, chatId: null });
      expect(ok(await H().patch(`/messages/${m.id}`, { chatId: c.id, text: 'Same place' })).text).toBe('Same place');
    });

    it('type text (default) needs non-blank text → required; gif needs url; document needs sharedDocumentId; audio needs audioDuration (0-86,400)', async () => {
      invalid(await H().post('/messages', { chatId: c.id }), 'text', 'required');
      invalid(await H().post('/messages', { chatId: c.id, text: '   \n ' }), 'text', 'required');
      invalid(await H().post('/messages', { chatId: c.id, type: 'text', text: null }), 'text', 'required');
      invalid(await H().post('/messages', { chatId: c.id, type: 'gif' }), 'url', 'required');
      const gif = ok(await H().post('/messages', { chatId: c.id, type: 'gif', url: 'https://media.example/cat.gif' }), 201);
      expect(gif).toMatchObject({ type: 'gif', url: 'https://media.example/cat.gif', text: null });
      invalid(await H().post('/messages', { chatId: c.id, type: 'gif', url: 'ftp://media.example/cat.gif' }), 'url');
      invalid(await H().post('/messages', { chatId: c.id, type: 'document' }), 'sharedDocumentId', 'required');
      const d = ok(await H().post('/documents', { title: 'Shared', projectId: p.id }), 201);
      const doc = ok(await H().post('/messages', { chatId: c.id, type: 'document', sharedDocumentId: d.id }), 201);
      expect(doc).toMatchObject({ type: 'document', sharedDocumentId: d.id });
      invalid(await H().post('/messages', { chatId: c.id, type: 'audio' }), 'audioDuration', 'required');
      const audio = ok(await H().post('/messages', { chatId: c.id, type: 'audio', audioDuration: 12.5 }), 201);
      expect(audio).toMatchObject({ type: 'audio', audioDuration: 12.5 });
      expect(ok(await H().post('/messages', { chatId: c.id, type: 'audio', audioDuration: AUDIO_MAX_SECONDS }), 201).audioDuration).toBe(AUDIO_MAX_SECONDS);
      invalid(await H().post('/messages', { chatId: c.id, type: 'audio', audioDuration: AUDIO_MAX_SECONDS + 1 }), 'audioDuration', 'too_big');
      invalid(await H().post('/messages', { chatId: c.id, type: 'audio', audioDuration: -1 }), 'audioDuration');
      invalid(await H().post('/messages', { chatId: c.id, type: 'video', text: 'x' }), 'type', 'invalid_value');
    });

    it('type and its payload are fixed at creation (PATCH type, url, audioDuration, sharedDocumentId → immutable); an edit cannot blank a text message', async () => {
      const m = await message({ chatId: c.id, text: 'Typed' });
      invalid(await H().patch(`/messages/${m.id}`, { type: 'gif' }), 'type', 'immutable');
      const gif = ok(await H().post('/messages', { chatId: c.id, type: 'gif', url: 'https://media.example/a.gif' }), 201);
      invalid(await H().patch(`/messages/${gif.id}`, { url: 'https://media.example/b.gif' }), 'url', 'immutable');
      const audio = ok(await H().post('/messages', { chatId: c.id, type: 'audio', audioDuration: 3 }), 201);
      invalid(await H().patch(`/messages/${audio.id}`, { audioDuration: 4 }), 'audioDuration', 'immutable');
      invalid(await H().patch(`/messages/${m.id}`, { text: '  ' }), 'text', 'required');
      expect(ok(await H().get(`/messages/${m.id}`))).toMatchObject({ text: 'Typed', isEdited: false });
    });

    it(`text holds up to ${MESSAGE_TEXT_MAX.toLocaleString('en')} characters (spec "Limits"): exactly that is accepted, one more → too_big, on create and on edit`, async () => {
      const max = ok(await H().post('/messages', { chatId: c.id, text: 'x'.repeat(MESSAGE_TEXT_MAX) }), 201);
      expect(max.text).toHaveLength(MESSAGE_TEXT_MAX);
      invalid(await H().post('/messages', { chatId: c.id, text: 'x'.repeat(MESSAGE_TEXT_MAX + 1) }), 'text', 'too_big');
      const m = await message({ chatId: c.id, text: 'short' });
      invalid(await H().patch(`/messages/${m.id}`, { text: 'y'.repeat(MESSAGE_TEXT_MAX + 1) }), 'text', 'too_big');
      expect(ok(await H().patch(`/messages/${m.id}`, { text: 'y'.repeat(MESSAGE_TEXT_MAX) })).text).toHaveLength(MESSAGE_TEXT_MAX);
    });
  });

  describe(`[${factory.name}] v3 Messages: mentions and tagged (spec "Message" mention tags; docs/not-shown.md "Mentions and tagged")`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);
    let p: any;
    let c: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Mention P', members: [H().a.regular.id] });
      c = await group({ name: 'Mention room', memberIds: [H().a.regular.id, H().a.client.id] });
    });

    it('tagged: member ids sent on create are kept; an unknown or another workspace\'s member → 404 resource_not_found with field tagged', async () => {
      const m = await message({ chatId: c.id, text: 'FYI', tagged: [H().a.regular.id] });
      expect(m.tagged).toEqual([H().a.regular.id]);
      const unknown = problem(await H().post('/messages', { chatId: c.id, text: 'x', tagged: ['nosuchmember'] }), 404, 'resource_not_found');
      expect(unknown.field).toBe('tagged');
      const foreign = problem(await H().post('/messages', { chatId: c.id, text: 'x', tagged: [H().b.owner.id] }), 404, 'resource_not_found');
      expect(foreign.field).toBe('tagged');
    });

    it('tagged is create-only: PATCH tagged with another value → 400 immutable', async () => {
      const m = await message({ chatId: c.id, text: 'Tag once', tagged: [H().a.regular.id] });
      invalid(await H().patch(`/messages/${m.id}`, { tagged: [H().a.client.id] }), 'tagged', 'immutable');
      invalid(await H().patch(`/messages/${m.id}`, { tagged: [] }), 'tagged', 'immutable');
      expect(ok(await H().get(`/messages/${m.id}`)).tagged).toEqual([H().a.regular.id]);
    });

    it('a <@member> tag adds the member to tagged, on create and on edit; expand=tagged answers the member records', async () => {
      const m = await message({ chatId: c.id, text: `Ping <@${H().a.regular.id}> and <@${H().a.regular.id}>` });
      expect(m.tagged).toEqual([H().a.regular.id]);
      const both = await message({ chatId: c.id, text: `Hey <@${H().a.client.id}>`, tagged: [H().a.regular.id] });
      expect([...both.tagged].sort()).toEqual([H().a.regular.id, H().a.client.id].sort());
      const edited = ok(await H().patch(`/messages/${m.id}`, { text: `Ping <@${H().a.regular.id}> and <@${H().a.client.id}>` }));
      expect([...edited.tagged].sort()).toEqual([H().a.regular.id, H().a.client.id].sort());
      const expanded = ok(await H().get(`/messages/${both.id}?expand=tagged`)).tagged;
      expect(expanded.map((x: any) => x.id).sort()).toEqual([H().a.regular.id, H().a.client.id].sort());
      const regular = expanded.find((x: any) => x.id === H().a.regular.id);
      expect(regular).toMatchObject({ id: H().a.regular.id, name: 'Alpha Regular' });
    });

    it('every tag kind resolving in the workspace is accepted: <@member> <?task> <#project> <??status> <^list> <~label> <$portfolio> <!chat>', async () => {
      const t = await H().task(p.id);
      const statusId = ok(await H().get(`/projects/${p.id}`)).defaultStatusId;
      expect(typeof statusId).toBe('string');
      const list = ok(await H().post('/lists', { name: 'Mention list', projectId: p.id }), 201);
      const label = ok(await H().post('/labels', { name: 'Mention label' }), 201);
      const text = [
        `<@${H().a.regular.id}>`, `<?${t.id}>`, `<#${p.id}>`, `<??${statusId}>`, `<^${list.id}>`, `<~${label.id}>`,
        `<$${H().a.generalPortfolioId}>`, `<!${p.discussionChatId}>`, `<!${c.id}>`,
      ].join(' ');
      const m = await message({ chatId: c.id, text });
      expect(m.text).toBe(text);
      expect(m.tagged).toEqual([H().a.regular.id]);
    });

    it('a tag naming a record of another workspace (or none) → 400 validation_failed, mention_not_found on text, with mentions listing the ids; on edit too', async () => {
      const bp = ok(await H().post('/projects', { name: 'B mention' }, { token: H().b.owner.token }), 201);
      const bt = ok(await H().post('/tasks', { name: 'B task', projectId: bp.id }, { token: H().b.owner.token }), 201);
      const cases: Array<[string, string]> = [
        [`See <#${bp.id}>`, bp.id], [`See <?${bt.id}>`, bt.id], [`Ask <@${H().b.owner.id}>`, H().b.owner.id],
        [`Portfolio <$${H().b.generalPortfolioId}>`, H().b.generalPortfolioId], [`Nothing <~nosuchlabel>`, 'nosuchlabel'],
      ];
      for (const [text, id] of cases) {
        const r = await H().post('/messages', { chatId: c.id, text });
        invalid(r, 'text', 'mention_not_found');
        expect(r.body.mentions).toContain(id);
      }
      // A tag of one kind naming a record of another kind is not found either.
      invalid(await H().post('/messages', { chatId: c.id, text: `<#${c.id}>` }), 'text', 'mention_not_found');
      const m = await message({ chatId: c.id, text: 'clean' });
      invalid(await H().patch(`/messages/${m.id}`, { text: `now <#${bp.id}>` }), 'text', 'mention_not_found');
      expect(ok(await H().get(`/messages/${m.id}`)).text).toBe('clean');
    });

    it(`at most ${MENTIONS_MAX} distinct tags: ${MENTIONS_MAX + 1} → too_many_mentions on text; ${MENTIONS_MAX} are looked up (mention_not_found), repeats count once`, async () => {
      const tags = (n: number) => Array.from({ length: n }, (_, i) => `<@ghost${i}>`).join(' ');
      invalid(await H().post('/messages', { chatId: c.id, text: tags(MENTIONS_MAX + 1) }), 'text', 'too_many_mentions');
      invalid(await H().post('/messages', { chatId: c.id, text: tags(MENTIONS_MAX) }), 'text', 'mention_not_found');
      const same = Array.from({ length: MENTIONS_MAX + 50 }, () => `<@${H().a.regular.id}>`).join(' ');
      expect((await message({ chatId: c.id, text: same })).tagged).toEqual([H().a.regular.id]);
    });
  });

  describe(`[${factory.name}] v3 Messages: editing, deleting, restoring and files (docs/not-shown.md "Editing and deleting messages", "files of a message")`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);
    let p: any;
    let c: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Edit P', members: [H().a.regular.id, H().a.client.id] });
      c = await group({ name: 'Edit room', memberIds: [H().a.regular.id, H().a.client.id] });
    });

    it('isEdited is false until the author edits the text, then true for good; message.updated carries the full message', async () => {
      const m = await message({ chatId: c.id, text: 'Draft' }, H().a.regular.token);
      expect(m.isEdited).toBe(false);
      H().clock.advance(1000);
      const { result, events } = await during(H(), () => H().patch(`/messages/${m.id}`, { text: 'Final' }, { token: H().a.regular.token }));
      const after = ok(result);
      expect(after).toMatchObject({ id: m.id, text: 'Final', isEdited: true });
      const [ev] = ofType(events, 'message.updated', m.id);
      expect(ev).toMatchObject({ aggregateType: 'message', aggregateId: m.id });
      expect(ev.payload.message).toEqual(after);
      expect(ok(await H().patch(`/messages/${m.id}`, { hideLinkPreview: true }, { token: H().a.regular.token }))).toMatchObject({ isEdited: true, hideLinkPreview: true });
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&isEdited[eq]=true`))).toContain(m.id);
      problem(await H().patch(`/messages/${m.id}`, { text: 'Stale', expectedUpdatedAt: m.updatedAt }, { token: H().a.regular.token }), 409, 'stale_write');
      problem(await H().patch(`/messages/${m.id}`, {}, { token: H().a.regular.token }), 400, 'empty_update');
    });

    it('only the author edits, deletes or restores: another member (the workspace owner too) → 403 permission_denied; a guest edits and deletes their own', async () => {
      const m = await message({ chatId: c.id, text: 'Mine' }, H().a.regular.token);
      for (const token of [H().a.owner.token, H().a.client.token]) {
        problem(await H().patch(`/messages/${m.id}`, { text: 'Yours now' }, { token }), 403, 'permission_denied');
        problem(await H().del(`/messages/${m.id}`, { token }), 403, 'permission_denied');
      }
      expect(ok(await H().get(`/messages/${m.id}`))).toMatchObject({ text: 'Mine', isEdited: false, purgeAt: null });
      ok(await H().del(`/messages/${m.id}`, { token: H().a.regular.token }), 204);
      problem(await H().post(`/messages/${m.id}/restore`), 403, 'permission_denied');
      expect(ok(await H().post(`/messages/${m.id}/restore`, undefined, { token: H().a.regular.token })).purgeAt).toBeNull();
      const g = await message({ chatId: c.id, text: 'Guest says' }, H().a.client.token);
      expect(ok(await H().patch(`/messages/${g.id}`, { text: 'Guest said' }, { token: H().a.client.token })).isEdited).toBe(true);
      ok(await H().del(`/messages/${g.id}`, { token: H().a.client.token }), 204);
    });

    it('soft delete: DELETE → 204 with message.removed (purgeAt = deletion + 30 days, deletedById); gone from GET and lists, listed by purgeAt[notNull]; restore → 200 with message.restored', async () => {
      const c = await group({ name: 'Trash room' });
      const m = await message({ chatId: c.id, text: 'Oops' });
      const del = await during(H(), () => H().del(`/messages/${m.id}`));
      ok(del.result, 204);
      const [rm] = ofType(del.events, 'message.removed', m.id);
      expect(rm).toMatchObject({ aggregateType: 'message', aggregateId: m.id });
      expect(rm.payload.message).toMatchObject({ id: m.id, deletedById: H().a.owner.id });
      expect(Date.parse(rm.payload.message.purgeAt)).toBe(H().clock.now() + 30 * 24 * HOUR);
      problem(await H().get(`/messages/${m.id}`), 404, 'resource_not_found');
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&limit=200`))).not.toContain(m.id);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&purgeAt[notNull]=true&limit=200`))).toEqual([m.id]);
      problem(await H().patch(`/messages/${m.id}`, { text: 'x' }), 404, 'resource_not_found');
      const res = await during(H(), () => H().post(`/messages/${m.id}/restore`));
      const back = ok(res.result);
      expect(back).toMatchObject({ id: m.id, purgeAt: null, deletedById: null, text: 'Oops' });
      const [rs] = ofType(res.events, 'message.restored', m.id);
      expect(rs.payload.message).toEqual(back);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&limit=200`))).toContain(m.id);
    });

    it('files: existing file ids; a body set replaces the set, dropped files stay (GET /files 200); each change emits message.files.added / .removed', async () => {
      const [f1, f2, f3] = await Promise.all(['a', 'b', 'c'].map(async (n) => ok(await H().upload(`bytes ${n}`, { name: `${n}.txt`, projectId: p.id }), 201)));
      const made = await during(H(), () => H().post('/messages', { chatId: c.id, text: 'With files', files: [f1.id, f2.id] }));
      const m = ok(made.result, 201);
      expect([...m.files].sort()).toEqual([f1.id, f2.id].sort());
      const added = ofType(made.events, 'message.files.added', m.id);
      expect(added.map((e) => e.payload.relatedId).sort()).toEqual([f1.id, f2.id].sort());
      for (const e of added) expect(e).toMatchObject({ aggregateType: 'message', payload: { parentId: m.id, relation: 'files' } });
      const swap = await during(H(), () => H().patch(`/messages/${m.id}`, { files: [f2.id, f3.id] }));
      expect([...ok(swap.result).files].sort()).toEqual([f2.id, f3.id].sort());
      expect(ofType(swap.events, 'message.files.removed', m.id).map((e) => e.payload.relatedId)).toEqual([f1.id]);
      expect(ofType(swap.events, 'message.files.added', m.id).map((e) => e.payload.relatedId)).toEqual([f3.id]);
      expect(ok(await H().get(`/files/${f1.id}`)).id).toBe(f1.id);
      const expanded = ok(await H().get(`/messages/${m.id}?expand=files`)).files;
      expect(expanded.map((x: any) => x.id).sort()).toEqual([f2.id, f3.id].sort());
      expect(expanded.find((x: any) => x.id === f2.id)).toMatchObject({ name: 'b.txt' });
      const none = await during(H(), () => H().patch(`/messages/${m.id}`, { files: [] }));
      expect(ok(none.result).files).toEqual([]);
      expect(ofType(none.events, 'message.files.removed', m.id)).toHaveLength(2);
      expect(ok(await H().get(`/files/${f3.id}`)).id).toBe(f3.id);
      const missing = problem(await H().post('/messages', { chatId: c.id, text: 'x', files: ['nosuchfile'] }), 404, 'm2m_target_not_found');
      expect(missing.missing).toEqual(['nosuchfile']);
      // Only files the caller may open: one of a project the caller cannot open is refused.
      const closed = await H().project({ name: 'Closed files', accessType: 'limited' });
      const hidden = ok(await H().upload('hidden', { name: 'hidden.txt', projectId: closed.id }), 201);
      problem(await H().post('/messages', { chatId: c.id, text: 'x', files: [hidden.id] }, { token: H().a.regular.token }), 403, 'project_access_denied');
    });

    it('POST / DELETE /messages/{id}/files add and remove single ids with message.files.added / .removed', async () => {
      const f = ok(await H().upload('sub', { name: 'sub.txt', projectId: p.id }), 201);
      const m = await message({ chatId: c.id, text: 'Sub-route' });
      const add = await during(H(), () => H().post(`/messages/${m.id}/files`, { ids: [f.id] }));
      expect(ok(add.result).files).toEqual([f.id]);
      expect(ofType(add.events, 'message.files.added', m.id).map((e) => e.payload)).toEqual([{ parentId: m.id, relatedId: f.id, relation: 'files' }]);
      const rm = await during(H(), () => H().del(`/messages/${m.id}/files`, { body: { ids: [f.id] } }));
      expect(ok(rm.result).files).toEqual([]);
      expect(ofType(rm.events, 'message.files.removed', m.id).map((e) => e.payload)).toEqual([{ parentId: m.id, relatedId: f.id, relation: 'files' }]);
      expect(ok(await H().get(`/files/${f.id}`)).id).toBe(f.id);
      problem(await H().post(`/messages/${m.id}/files`, { ids: ['nosuchfile'] }), 404, 'm2m_target_not_found');
    });

    it('the files of a message are part of what only its author edits: another member adding or removing them through the sub-route → 403 permission_denied', async () => {
      const f = ok(await H().upload('theirs', { name: 'theirs.txt', projectId: p.id }), 201);
      const m = await message({ chatId: c.id, text: 'Author only', files: [f.id] }, H().a.regular.token);
      problem(await H().patch(`/messages/${m.id}`, { files: [] }), 403, 'permission_denied');
      problem(await H().del(`/messages/${m.id}/files`, { body: { ids: [f.id] } }), 403, 'permission_denied');
      const g = ok(await H().upload('extra', { name: 'extra.txt', projectId: p.id }), 201);
      problem(await H().post(`/messages/${m.id}/files`, { ids: [g.id] }), 403, 'permission_denied');
      expect(ok(await H().get(`/messages/${m.id}`)).files).toEqual([f.id]);
    });
  });

  describe(`[${factory.name}] v3 Messages: who sees a message (docs/not-shown.md "Who sees a chat", "Message contexts": a message is seen by whoever sees its context)`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);

    it('messages of a chat are invisible to non-members: 404 on GET, PATCH, DELETE, restore and reply; never listed, even with chatId[eq]', async () => {
      const c = await group({ name: 'Secret room', memberIds: [H().a.regular.id] });
      const m = await message({ chatId: c.id, text: 'Secret' });
      for (const token of [H().a.client.token, H().b.owner.token]) {
        problem(await H().get(`/messages/${m.id}`, { token }), 404, 'resource_not_found');
        problem(await H().patch(`/messages/${m.id}`, { text: 'x' }, { token }), 404, 'resource_not_found');
        problem(await H().del(`/messages/${m.id}`, { token }), 404, 'resource_not_found');
        problem(await H().post(`/messages/${m.id}/restore`, undefined, { token }), 404, 'resource_not_found');
        problem(await H().post('/messages', { parentMessageId: m.id, text: 'reply' }, { token }), 404, 'resource_not_found');
        expect(ids(await H().get(`/messages?chatId[eq]=${c.id}`, { token }))).toEqual([]);
        expect(ids(await H().get('/messages?limit=200', { token }))).not.toContain(m.id);
      }
      expect(ok(await H().get(`/messages/${m.id}`, { token: H().a.regular.token })).text).toBe('Secret');
    });

    it('replies (parentMessageId) inherit the parent\'s visibility: a reply in a chat is seen by its members only, the workspace owner included in "everyone else"', async () => {
      const c = await group({ name: 'Reply room', memberIds: [H().a.client.id] }, H().a.regular.token);
      const m = await message({ chatId: c.id, text: 'Parent' }, H().a.regular.token);
      const r = await message({ parentMessageId: m.id, text: 'Child' }, H().a.client.token);
      expect(r).toMatchObject({ parentMessageId: m.id, chatId: null });
      const rr = await message({ parentMessageId: r.id, text: 'Grandchild' }, H().a.regular.token);
      for (const id of [r.id, rr.id]) {
        problem(await H().get(`/messages/${id}`), 404, 'resource_not_found');
        expect(ok(await H().get(`/messages/${id}`, { token: H().a.client.token })).id).toBe(id);
      }
      expect(ids(await H().get(`/messages?parentMessageId[eq]=${m.id}`))).toEqual([]);
      expect(ids(await H().get(`/messages?parentMessageId[eq]=${m.id}`, { token: H().a.client.token }))).toEqual([r.id]);
      expect(ids(await H().get('/messages?limit=200'))).not.toContain(rr.id);
    });

    it('a file attached to a chat message, its annotations and the comments on them follow the chat: 404 for non-members', async () => {
      const c = await group({ name: 'Attachments', memberIds: [H().a.regular.id] });
      const m = await message({ chatId: c.id, text: 'see attached' });
      const f = ok(await H().upload('secret bytes', { name: 'secret.png', messageId: m.id }), 201);
      const a = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }, { token: H().a.regular.token }), 201);
      const fm = await message({ fileId: f.id, text: 'on the file' }, H().a.regular.token);
      const am = await message({ annotationId: a.id, text: 'on the spot' }, H().a.regular.token);
      for (const id of [fm.id, am.id]) {
        expect(ok(await H().get(`/messages/${id}`)).id).toBe(id);
        problem(await H().get(`/messages/${id}`, { token: H().a.client.token }), 404, 'resource_not_found');
      }
      problem(await H().post('/messages', { fileId: f.id, text: 'peek' }, { token: H().a.client.token }), 404, 'resource_not_found');
      problem(await H().post('/messages', { annotationId: a.id, text: 'peek' }, { token: H().a.client.token }), 404, 'resource_not_found');
      expect(ids(await H().get(`/messages?fileId[eq]=${f.id}`, { token: H().a.client.token }))).toEqual([]);
      expect(ids(await H().get(`/messages?fileId[eq]=${f.id}&sort=createdAt`)).sort()).toEqual([fm.id, am.id].sort());
    });

    it('a visible message sharing a private document does not reveal it: expand=sharedDocument is null for everyone but its creator', async () => {
      const p = await H().project({ name: 'Share P', members: [H().a.regular.id] });
      const d = ok(await H().post('/documents', { title: 'Mine alone', projectId: p.id, accessType: 'private' }, { token: H().a.regular.token }), 201);
      const c = await group({ name: 'Share room', memberIds: [H().a.owner.id] }, H().a.regular.token);
      const m = await message({ chatId: c.id, type: 'document', sharedDocumentId: d.id }, H().a.regular.token);
      const seen = ok(await H().get(`/messages/${m.id}?expand=sharedDocument`));
      expect(seen.sharedDocumentId).toBe(d.id);
      expect(seen.sharedDocument).toBeNull();
      expect(ok(await H().get(`/messages/${m.id}?expand=sharedDocument`, { token: H().a.regular.token })).sharedDocument).toMatchObject({ id: d.id, title: 'Mine alone' });
    });

    it('a message on a task of a project the caller cannot open: 403 project_access_denied on read, write and post; left out of lists; replies follow', async () => {
      const closed = await H().project({ name: 'Closed msgs', accessType: 'limited', members: [H().a.client.id] });
      const t = await H().task(closed.id);
      const m = await message({ taskId: t.id, text: 'Internal' });
      const r = await message({ parentMessageId: m.id, text: 'Internal reply' }, H().a.client.token);
      problem(await H().get(`/messages/${m.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');
      problem(await H().get(`/messages/${r.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');
      problem(await H().post('/messages', { taskId: t.id, text: 'me too' }, { token: H().a.regular.token }), 403, 'project_access_denied');
      problem(await H().post('/messages', { parentMessageId: m.id, text: 'me too' }, { token: H().a.regular.token }), 403, 'project_access_denied');
      expect(ids(await H().get(`/messages?taskId[eq]=${t.id}`, { token: H().a.regular.token }))).toEqual([]);
      const all = ids(await H().get('/messages?limit=200', { token: H().a.regular.token }));
      expect(all).not.toContain(m.id);
      expect(all).not.toContain(r.id);
      expect(ids(await H().get(`/messages?taskId[eq]=${t.id}`, { token: H().a.client.token }))).toEqual([m.id]);
    });

    it('a message on another member\'s private document is that member\'s alone: 404 for everyone else (the workspace owner too), never listed; replies follow', async () => {
      const p = await H().project({ name: 'Private docs', members: [H().a.regular.id, H().a.client.id] });
      const d = ok(await H().post('/documents', { title: 'Diary', projectId: p.id, accessType: 'private' }, { token: H().a.regular.token }), 201);
      const m = await message({ documentId: d.id, text: 'Dear diary' }, H().a.regular.token);
      const r = await message({ parentMessageId: m.id, text: 'PS' }, H().a.regular.token);
      for (const token of [H().a.owner.token, H().a.client.token]) {
        problem(await H().get(`/messages/${m.id}`, { token }), 404, 'resource_not_found');
        problem(await H().get(`/messages/${r.id}`, { token }), 404, 'resource_not_found');
        problem(await H().post('/messages', { documentId: d.id, text: 'peek' }, { token }), 404, 'resource_not_found');
        expect(ids(await H().get(`/messages?documentId[eq]=${d.id}`, { token }))).toEqual([]);
        expect(ids(await H().get(`/messages?parentMessageId[eq]=${m.id}`, { token }))).toEqual([]);
      }
      expect(ids(await H().get(`/messages?documentId[eq]=${d.id}`, { token: H().a.regular.token }))).toEqual([m.id]);
      const shared = ok(await H().post('/documents', { title: 'Shared doc', projectId: p.id }, { token: H().a.regular.token }), 201);
      const sm = await message({ documentId: shared.id, text: 'Open comment' }, H().a.regular.token);
      expect(ok(await H().get(`/messages/${sm.id}`, { token: H().a.client.token })).id).toBe(sm.id);
      // Sharing a private document in a message needs access to it.
      problem(await H().post('/messages', { documentId: shared.id, type: 'document', sharedDocumentId: d.id }), 404, 'resource_not_found');
    });
  });

  describe(`[${factory.name}] v3 Messages: filters, default sort and expand (spec "Message" filters, default sort -createdAt, expand)`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);
    let c: any;
    let t: any;
    let hello: string;
    let m1: any;
    let m2: any;
    let m3: any;
    let reply: any;
    beforeAll(async () => {
      const p = await H().project({ name: 'Filter P', members: [H().a.regular.id] });
      t = await H().task(p.id);
      c = await group({ name: 'Filter room', memberIds: [H().a.regular.id] });
      hello = ok(await H().get(`/messages?chatId[eq]=${c.id}`)).data[0].id;
      H().clock.advance(1000);
      m1 = await message({ chatId: c.id, text: `first <@${H().a.regular.id}>` });
      H().clock.advance(1000);
      m2 = await message({ chatId: c.id, type: 'gif', url: 'https://media.example/x.gif' }, H().a.regular.token);
      H().clock.advance(1000);
      m3 = await message({ chatId: c.id, type: 'audio', audioDuration: 7 }, H().a.regular.token);
      H().clock.advance(1000);
      reply = await message({ parentMessageId: m1.id, text: 'reply' }, H().a.regular.token);
      H().clock.advance(1000);
      ok(await H().patch(`/messages/${m1.id}`, { text: `first! <@${H().a.regular.id}>` }));
    });

    it('default sort is -createdAt (newest first); pages of one walk every message once, also among equal createdAt', async () => {
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}`))).toEqual([m3.id, m2.id, m1.id, hello]);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&sort=createdAt`))).toEqual([hello, m1.id, m2.id, m3.id]);
      const room = await group({ name: 'Same instant' });
      const same = [];
      for (let i = 0; i < 3; i++) same.push((await message({ chatId: room.id, text: `tie ${i}` })).id);
      const all = ids(await H().get(`/messages?chatId[eq]=${room.id}`));
      expect(all.slice().sort()).toEqual([...same, ...ids(await H().get(`/messages?chatId[eq]=${room.id}&subtype[notNull]=true`))].sort());
      const seen: string[] = [];
      let page = ok(await H().get(`/messages?chatId[eq]=${room.id}&limit=1`));
      seen.push(...page.data.map((x: any) => x.id));
      while (page.hasMore) {
        page = ok(await H().get(`/messages?chatId[eq]=${room.id}&limit=1&cursor=${encodeURIComponent(page.nextCursor)}`));
        seen.push(...page.data.map((x: any) => x.id));
      }
      expect(seen).toEqual(all);
    });

    it('filters authorId, chatId, taskId, parentMessageId, type[eq|in], subtype[eq|null|notNull], isEdited[eq]', async () => {
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&authorId[eq]=${H().a.regular.id}`))).toEqual([m3.id, m2.id]);
      expect(ids(await H().get(`/messages?authorId[in]=${H().a.regular.id}&parentMessageId[eq]=${m1.id}`))).toEqual([reply.id]);
      expect(ids(await H().get(`/messages?chatId[in]=${c.id}&type[in]=gif,audio`))).toEqual([m3.id, m2.id]);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&type[eq]=text`))).toEqual([m1.id, hello]);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&subtype[null]=true`))).toEqual([m3.id, m2.id, m1.id]);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&subtype[notNull]=true`))).toEqual([hello]);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&subtype[eq]=hello`))).toEqual([hello]);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&isEdited[eq]=true`))).toEqual([m1.id]);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&isEdited[eq]=false`))).toEqual([m3.id, m2.id, hello]);
      const tm = await message({ taskId: t.id, text: 'task comment' });
      expect(ids(await H().get(`/messages?taskId[eq]=${t.id}`))).toEqual([tm.id]);
      expect(ids(await H().get(`/messages?taskId[eq]=${t.id}&chatId[eq]=${c.id}`))).toEqual([]);
    });

    it('expand author, tagged, messages (replies), chat', async () => {
      const one = ok(await H().get(`/messages/${m1.id}?expand=author,tagged,messages,chat`));
      expect(one.author).toMatchObject({ id: H().a.owner.id });
      expect(one.tagged.map((x: any) => x.id)).toEqual([H().a.regular.id]);
      expect(one.messages.map((x: any) => x.id)).toEqual([reply.id]);
      expect(one.chat).toMatchObject({ id: c.id, type: 'group', name: 'Filter room' });
      expect(one.chatId).toBe(c.id);
      const h = ok(await H().get(`/messages/${hello}?expand=author`));
      expect(h.authorId).toBeNull();
      expect(h.author).toBeNull();
      const page = ok(await H().get(`/messages?chatId[eq]=${c.id}&expand=author`)).data;
      expect(page.map((x: any) => x.author?.id ?? null)).toEqual([H().a.regular.id, H().a.regular.id, H().a.owner.id, null]);
    });
  });

  describe(`[${factory.name}] v3 Messages: lifecycle messages (spec "Message" subtype hello, tieTask, untieTask, moveSubtask; docs/not-shown.md "Lifecycle messages")`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Life P', members: [H().a.regular.id] });
    });
    const lifecycle = async (taskId: string, subtype: string) => ok(await H().get(`/messages?taskId[eq]=${taskId}&subtype[eq]=${subtype}`)).data;

    it('creating a group chat posts a hello message in it: text type, subtype hello, authorId null, tagging the creator, announced with message.created', async () => {
      const { result, events } = await during(H(), () => H().post('/chats', { name: 'Hello room', memberIds: [H().a.client.id] }, { token: H().a.regular.token }));
      const c = ok(result, 201);
      const msgs = ok(await H().get(`/messages?chatId[eq]=${c.id}`, { token: H().a.client.token })).data;
      expect(msgs).toHaveLength(1);
      expect(msgs[0]).toMatchObject({ chatId: c.id, type: 'text', subtype: 'hello', authorId: null, tagged: [H().a.regular.id], isEdited: false });
      expect(msgs[0].text).toContain(`<@${H().a.regular.id}>`);
      const [ev] = ofType(events, 'message.created', msgs[0].id);
      expect(ev).toMatchObject({ aggregateType: 'message', aggregateId: msgs[0].id });
      expect(ev.payload.message).toEqual(msgs[0]);
      expect(c.lastMessageAt).toBe(msgs[0].createdAt);
      // Direct chats and the self-chat start without one.
      const self = ok(await H().post('/chats/self', undefined, { token: H().a.regular.token }), 201);
      expect(ids(await H().get(`/messages?chatId[eq]=${self.id}`, { token: H().a.regular.token }))).toEqual([]);
    });

    it('a task created with parentTaskId posts tieTask on the parent\'s thread (authorId null, message.created)', async () => {
      const parent = await H().task(p.id, { name: 'Parent' });
      const { result, events } = await during(H(), () => H().post('/tasks', { name: 'Child', projectId: p.id, parentTaskId: parent.id }));
      const child = ok(result, 201);
      const msgs = await lifecycle(parent.id, 'tieTask');
      expect(msgs).toHaveLength(1);
      expect(msgs[0]).toMatchObject({ taskId: parent.id, type: 'text', subtype: 'tieTask', authorId: null, chatId: null });
      expect(msgs[0].text).toContain(child.id);
      expect(ofType(events, 'message.created', msgs[0].id)).toHaveLength(1);
      expect(await lifecycle(child.id, 'tieTask')).toEqual([]);
    });

    it('PATCH parentTaskId null posts untieTask on the former parent; null → a parent posts tieTask there; parent A → parent B posts moveSubtask on the subtask\'s thread', async () => {
      const a = await H().task(p.id, { name: 'Parent A' });
      const b = await H().task(p.id, { name: 'Parent B' });
      const sub = await H().task(p.id, { name: 'Sub', parentTaskId: a.id });
      const untie = await during(H(), () => H().patch(`/tasks/${sub.id}`, { parentTaskId: null }));
      ok(untie.result);
      const untied = await lifecycle(a.id, 'untieTask');
      expect(untied).toHaveLength(1);
      expect(untied[0]).toMatchObject({ subtype: 'untieTask', authorId: null, taskId: a.id });
      expect(ofType(untie.events, 'message.created', untied[0].id)).toHaveLength(1);
      ok(await H().patch(`/tasks/${sub.id}`, { parentTaskId: b.id }));
      expect(await lifecycle(b.id, 'tieTask')).toHaveLength(1);
      const move = await during(H(), () => H().patch(`/tasks/${sub.id}`, { parentTaskId: a.id }));
      ok(move.result);
      const moved = await lifecycle(sub.id, 'moveSubtask');
      expect(moved).toHaveLength(1);
      expect(moved[0]).toMatchObject({ subtype: 'moveSubtask', authorId: null, taskId: sub.id });
      expect(ofType(move.events, 'message.created', moved[0].id)).toHaveLength(1);
      expect(await lifecycle(a.id, 'moveSubtask')).toEqual([]);
      expect(await lifecycle(b.id, 'moveSubtask')).toEqual([]);
      // A PATCH that keeps the parent posts nothing.
      const same = await during(H(), () => H().patch(`/tasks/${sub.id}`, { parentTaskId: a.id, name: 'Sub renamed' }));
      expect(ofType(same.events, 'message.created')).toEqual([]);
    });

    it('lifecycle messages cannot be edited (403 permission_denied, even by whoever caused them) but any member who sees them may delete them', async () => {
      const c = ok(await H().post('/chats', { name: 'Bye hello', memberIds: [H().a.regular.id] }), 201);
      const [hello] = ids(await H().get(`/messages?chatId[eq]=${c.id}`));
      problem(await H().patch(`/messages/${hello}`, { text: 'Rewritten' }), 403, 'permission_denied');
      problem(await H().patch(`/messages/${hello}`, { text: 'Rewritten' }, { token: H().a.regular.token }), 403, 'permission_denied');
      ok(await H().del(`/messages/${hello}`, { token: H().a.regular.token }), 204);
      problem(await H().get(`/messages/${hello}`), 404, 'resource_not_found');
      const parent = await H().task(p.id, { name: 'Tie parent' });
      await H().task(p.id, { name: 'Tie child', parentTaskId: parent.id });
      const [tie] = (await lifecycle(parent.id, 'tieTask')).map((x: any) => x.id);
      problem(await H().patch(`/messages/${tie}`, { text: 'x' }), 403, 'permission_denied');
      ok(await H().del(`/messages/${tie}`, { token: H().a.regular.token }), 204);
      // A member who does not see it gets 404.
      const closed = await H().project({ name: 'Life closed', accessType: 'limited' });
      const cp = await H().task(closed.id, { name: 'Closed parent' });
      await H().task(closed.id, { name: 'Closed child', parentTaskId: cp.id });
      const [hidden] = (await lifecycle(cp.id, 'tieTask')).map((x: any) => x.id);
      problem(await H().del(`/messages/${hidden}`, { token: H().a.regular.token }), 403, 'project_access_denied');
    });
  });

  describe(`[${factory.name}] v3 Messages: annotation threads and task moves (spec "Annotation" taskId, "File" annotationTaskId; docs/not-shown.md "Annotation threads", "Message contexts")`, () => {
    const H = harnessPerDescribe(factory);
    const message = messageOf(H);

    it('the first comment on an annotation of a project file makes the file\'s thread task (annotation.taskId and file.annotationTaskId, each with its updated event); later comments and annotations reuse it', async () => {
      const p = await H().project({ name: 'Review P', members: [H().a.regular.id] });
      const f = ok(await H().upload('image bytes', { name: 'mockup.png', projectId: p.id }), 201);
      expect(f.annotationTaskId ?? null).toBeNull();
      const a1 = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }), 201);
      expect(a1.taskId).toBeNull();
      const first = await during(H(), () => H().post('/messages', { annotationId: a1.id, text: 'Move this left' }, { token: H().a.regular.token }));
      const m1 = ok(first.result, 201);
      expect(m1).toMatchObject({ annotationId: a1.id, fileId: f.id });
      const annotation = ok(await H().get(`/annotations/${a1.id}`));
      const taskId = annotation.taskId;
      expect(typeof taskId).toBe('string');
      expect(ok(await H().get(`/files/${f.id}`)).annotationTaskId).toBe(taskId);
      const task = ok(await H().get(`/tasks/${taskId}`));
      expect(task).toMatchObject({ projectId: p.id, name: 'Annotations: mockup.png' });
      const [au] = ofType(first.events, 'annotation.updated', a1.id);
      expect(au).toMatchObject({ aggregateType: 'annotation', aggregateId: a1.id });
      expect(au.payload.annotation.taskId).toBe(taskId);
      const [fu] = ofType(first.events, 'file.updated', f.id);
      expect(fu).toMatchObject({ aggregateType: 'file', aggregateId: f.id });
      expect(fu.payload.file.annotationTaskId).toBe(taskId);
      expect(ofType(first.events, 'task.created', taskId)).toHaveLength(1);

      const second = await during(H(), () => H().post('/messages', { fileId: f.id, annotationId: a1.id, text: 'And up' }));
      ok(second.result, 201);
      expect(ofType(second.events, 'task.created')).toEqual([]);
      expect(ofType(second.events, 'annotation.updated')).toEqual([]);
      expect(ofType(second.events, 'file.updated')).toEqual([]);

      const a2 = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'POINT', x: 10, y: 20 } }), 201);
      const third = await during(H(), () => H().post('/messages', { annotationId: a2.id, text: 'Another spot' }));
      ok(third.result, 201);
      expect(ok(await H().get(`/annotations/${a2.id}`)).taskId).toBe(taskId);
      expect(ofType(third.events, 'task.created')).toEqual([]);
      expect(ofType(third.events, 'annotation.updated', a2.id)).toHaveLength(1);
      expect(ok(await H().get(`/files/${f.id}`)).annotationTaskId).toBe(taskId);
      expect(ids(await H().get(`/messages?annotationId[eq]=${a1.id}&sort=createdAt`)).length).toBe(2);
    });

    it('a file outside any project (a chat attachment) gets no thread task', async () => {
      const c = ok(await H().post('/chats', { name: 'Attach room' }), 201);
      const m = await message({ chatId: c.id, text: 'see file' });
      const f = ok(await H().upload('chat bytes', { name: 'chat.png', messageId: m.id }), 201);
      const a = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }), 201);
      const { result, events } = await during(H(), () => H().post('/messages', { annotationId: a.id, text: 'here' }));
      ok(result, 201);
      expect(ofType(events, 'task.created')).toEqual([]);
      expect(ok(await H().get(`/annotations/${a.id}`)).taskId).toBeNull();
    });

    it('a task comment follows the task to another project: after PATCH /tasks/{id} {projectId}, a member of the new project who could not open the old one sees it', async () => {
      const oldP = await H().project({ name: 'Old home', accessType: 'limited', members: [H().a.owner.id] });
      const newP = await H().project({ name: 'New home', accessType: 'limited', members: [H().a.owner.id, H().a.regular.id] });
      const t = await H().task(oldP.id, { name: 'Mover' });
      const m = await message({ taskId: t.id, text: 'Comment before the move' });
      const r = await message({ parentMessageId: m.id, text: 'Reply before the move' });
      const f = ok(await H().upload('task file', { name: 'task.txt', taskId: t.id }), 201);
      const fm = await message({ fileId: f.id, text: 'On the file' });
      problem(await H().get(`/messages/${m.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');
      expect(ids(await H().get(`/messages?taskId[eq]=${t.id}`, { token: H().a.regular.token }))).toEqual([]);
      ok(await H().patch(`/tasks/${t.id}`, { projectId: newP.id }));
      for (const id of [m.id, r.id, fm.id]) expect(ok(await H().get(`/messages/${id}`, { token: H().a.regular.token })).id).toBe(id);
      expect(ids(await H().get(`/messages?taskId[eq]=${t.id}`, { token: H().a.regular.token }))).toEqual([m.id]);
      expect(ids(await H().get('/messages?limit=200', { token: H().a.regular.token }))).toEqual(expect.arrayContaining([m.id, r.id, fm.id]));
      expect(ok(await H().post('/messages', { parentMessageId: m.id, text: 'Now I can answer' }, { token: H().a.regular.token }), 201).parentMessageId).toBe(m.id);
    });
  });

  describe(`[${factory.name}] v3 Chats and Messages: events (spec "Events": lifecycle and membership events of chat and message)`, () => {
    const H = harnessPerDescribe(factory);

    it('chat.created/updated/removed and message.created/updated/removed/restored and message.files.added/removed carry aggregateType, aggregateId, teamId and the resource under its own key', async () => {
      const p = await H().project({ name: 'Events P' });
      const f = ok(await H().upload('ev', { name: 'ev.txt', projectId: p.id }), 201);
      const { events } = await during(H(), async () => {
        const c = ok(await H().post('/chats', { name: 'Events room' }), 201);
        ok(await H().patch(`/chats/${c.id}`, { name: 'Events room 2' }));
        const m = ok(await H().post('/messages', { chatId: c.id, text: 'ev', files: [f.id] }), 201);
        ok(await H().patch(`/messages/${m.id}`, { text: 'ev2', files: [] }));
        ok(await H().del(`/messages/${m.id}`), 204);
        ok(await H().post(`/messages/${m.id}/restore`));
        ok(await H().del(`/chats/${c.id}`), 204);
        const t = await H().task(p.id);
        ok(await H().post('/messages', { taskId: t.id, text: 'on a task' }), 201);
        return { c, m };
      });
      const lifecycle: Array<[string, string, string]> = [
        ['chat.created', 'chat', 'chat'], ['chat.updated', 'chat', 'chat'], ['chat.removed', 'chat', 'chat'],
        ['message.created', 'message', 'message'], ['message.updated', 'message', 'message'],
        ['message.removed', 'message', 'message'], ['message.restored', 'message', 'message'],
      ];
      for (const [type, aggregateType, key] of lifecycle) {
        const evs = ofType(events, type);
        expect(evs.length, type).toBeGreaterThan(0);
        for (const e of evs) {
          expect(e.aggregateType, type).toBe(aggregateType);
          expect(e.teamId, type).toBe(H().a.id);
          expect(Object.keys(e.payload), type).toEqual([key]);
          expect(e.payload[key].id, type).toBe(e.aggregateId);
        }
      }
      for (const type of ['message.files.added', 'message.files.removed']) {
        const evs = ofType(events, type);
        expect(evs, type).toHaveLength(1);
        expect(evs[0].aggregateType).toBe('message');
        expect(evs[0].payload).toEqual({ parentId: evs[0].aggregateId, relatedId: f.id, relation: 'files' });
      }
      expect(events.filter((e) => e.type.startsWith('chat.') && !['chat.created', 'chat.updated', 'chat.removed'].includes(e.type))).toEqual([]);
      // projectId of the envelope: null for chat messages, the task's project for a task comment.
      const created = ofType(events, 'message.created');
      expect(created.filter((e) => e.payload.message.chatId !== null).map((e) => e.projectId)).toEqual(created.filter((e) => e.payload.message.chatId !== null).map(() => null));
      expect(created.filter((e) => e.payload.message.taskId !== null).map((e) => e.projectId)).toEqual([p.id]);
    });
  });

  describe(`[${factory.name}] v3 Messages: events reach only webhooks of members who may see the record (docs/not-shown.md "Who sees a chat", "Message contexts"; review fix: event audience)`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);
    /** The owner's webhook (the owner has manageWebhooks; the regular member has not). */
    let hook: any;
    beforeAll(async () => {
      hook = ok(await H().post('/webhooks', { url: 'https://hooks.invalid/x', events: ['message.*', 'message.*.*', 'chat.*', 'document.*', 'file.*'] }), 201);
    });
    /** Events of records: file.createUploadUrl (an upload slot, no record anyone sees) is left out. */
    const ofRecords = (events: any[]) => events.filter((e) => e.type !== 'file.createUploadUrl');
    /** The types of `events` for which the owner's webhook got a delivery job. */
    const delivered = async (events: any[]): Promise<string[]> => {
      const jobs = await H().store.db.selectFrom('webhook_jobs').selectAll().where('webhook_id', '=', hook.id).execute();
      const got = new Set(jobs.map((j: any) => j.event_id));
      return ofRecords(events).filter((e) => got.has(e.eventId)).map((e) => e.type).sort();
    };

    it('a group chat the webhook\'s creator is not in: chat.created, the hello, messages, replies, attached files and the chat\'s removal are recorded but never queued for that webhook', async () => {
      const { result, events } = await during(H(), async () => {
        const c = await group({ name: 'Without the owner', memberIds: [H().a.client.id] }, H().a.regular.token);
        const m = await message({ chatId: c.id, text: 'just us' }, H().a.regular.token);
        await message({ parentMessageId: m.id, text: 'a reply' }, H().a.client.token);
        ok(await H().upload('ours', { name: 'ours.txt', messageId: m.id }, H().a.regular.token), 201);
        return c;
      });
      const c = result;
      expect(ofType(events, 'chat.created', c.id)).toHaveLength(1);
      expect(ofType(events, 'message.created')).toHaveLength(3);
      expect(ofType(events, 'message.files.added')).toHaveLength(1);
      expect(ofType(events, 'file.created')).toHaveLength(1);
      expect(await delivered(events)).toEqual([]);
      const gone = await during(H(), () => H().del(`/chats/${c.id}`, { token: H().a.regular.token }));
      ok(gone.result, 204);
      expect(ofType(gone.events, 'chat.removed', c.id)).toHaveLength(1);
      expect(await delivered(gone.events)).toEqual([]);
    });

    it('a group chat the webhook\'s creator is in (made by them or by another member): its events are queued for that webhook, the removal too', async () => {
      const own = await during(H(), async () => {
        const c = await group({ name: 'With the owner', memberIds: [H().a.regular.id] });
        await message({ chatId: c.id, text: 'hello all' }, H().a.regular.token);
        return c;
      });
      expect(await delivered(own.events)).toEqual(['chat.created', 'message.created', 'message.created']);
      const theirs = await during(H(), async () => {
        const c = await group({ name: 'Owner invited', memberIds: [H().a.owner.id] }, H().a.regular.token);
        await message({ chatId: c.id, text: 'welcome' }, H().a.regular.token);
        return c;
      });
      expect(await delivered(theirs.events)).toEqual(['chat.created', 'message.created', 'message.created']);
      // Who may see a removed chat (and its messages) is read before its members go: every removal reaches a member's webhook.
      const gone = await during(H(), () => H().del(`/chats/${own.result.id}`));
      ok(gone.result, 204);
      expect(ofType(gone.events, 'chat.removed', own.result.id)).toHaveLength(1);
      expect(ofType(gone.events, 'message.removed').length).toBeGreaterThan(0);
      expect(await delivered(gone.events)).toEqual(ofRecords(gone.events).map((e) => e.type).sort());
    });

    it('a private document of another member: document.created and the comments on it reach no webhook of the owner; a workspace-visible document and a task comment do', async () => {
      const p = await H().project({ name: 'Audience P', members: [H().a.regular.id] });
      const priv = await during(H(), async () => {
        const d = ok(await H().post('/documents', { title: 'Mine alone', projectId: p.id, accessType: 'private' }, { token: H().a.regular.token }), 201);
        await message({ documentId: d.id, text: 'note to self' }, H().a.regular.token);
        return d;
      });
      expect(ofType(priv.events, 'document.created', priv.result.id)).toHaveLength(1);
      expect(ofType(priv.events, 'message.created')).toHaveLength(1);
      expect(await delivered(priv.events)).toEqual([]);
      const open = await during(H(), async () => {
        const d = ok(await H().post('/documents', { title: 'For all', projectId: p.id }, { token: H().a.regular.token }), 201);
        await message({ documentId: d.id, text: 'open comment' }, H().a.regular.token);
      });
      expect(await delivered(open.events)).toEqual(['document.created', 'message.created']);
      const t = await H().task(p.id, { name: 'Public thread' });
      const comment = await during(H(), () => message({ taskId: t.id, text: 'a task comment' }, H().a.regular.token));
      expect(await delivered(comment.events)).toEqual(['message.created']);
    });
  });

  describe(`[${factory.name}] v3 Messages: events carry at most ${EVENT_TEXT_MAX.toLocaleString('en')} characters of text (docs/not-shown.md "Conversations and files"; review fix: textTruncated)`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    let c: any;
    beforeAll(async () => {
      c = await group({ name: 'Long texts', memberIds: [H().a.regular.id] });
    });
    const longText = (n: number) => '0123456789'.repeat(Math.ceil(n / 10)).slice(0, n);

    it(`a text over ${EVENT_TEXT_MAX.toLocaleString('en')} characters: the answer and GET hold all of it; message.created carries its first ${EVENT_TEXT_MAX.toLocaleString('en')} characters and textTruncated: true`, async () => {
      const text = `${longText(EVENT_TEXT_MAX)}tail beyond the cut ${longText(40_000)}`;
      const { result, events } = await during(H(), () => H().post('/messages', { chatId: c.id, text }));
      const m = ok(result, 201);
      expect(m.text).toBe(text);
      expect(m).not.toHaveProperty('textTruncated');
      const got = ok(await H().get(`/messages/${m.id}`));
      expect(got.text).toBe(text);
      expect(got).not.toHaveProperty('textTruncated');
      const [ev] = ofType(events, 'message.created', m.id);
      expect(ev.payload.message.text).toHaveLength(EVENT_TEXT_MAX);
      expect(ev.payload.message.text).toBe(text.slice(0, EVENT_TEXT_MAX));
      expect(ev.payload.message.textTruncated).toBe(true);
      const { text: _a, textTruncated: _b, ...rest } = ev.payload.message;
      const { text: _c, ...answered } = m;
      expect(rest).toEqual(answered);
    });

    it('an edit to a long text truncates message.updated too; back under the bound, the event carries the whole text without textTruncated', async () => {
      const m = ok(await H().post('/messages', { chatId: c.id, text: 'short' }), 201);
      const long = longText(EVENT_TEXT_MAX + 1);
      const up = await during(H(), () => H().patch(`/messages/${m.id}`, { text: long }));
      expect(ok(up.result).text).toBe(long);
      const [ev] = ofType(up.events, 'message.updated', m.id);
      expect(ev.payload.message.text).toBe(long.slice(0, EVENT_TEXT_MAX));
      expect(ev.payload.message.textTruncated).toBe(true);
      const back = await during(H(), () => H().patch(`/messages/${m.id}`, { text: 'short again' }));
      const [ev2] = ofType(back.events, 'message.updated', m.id);
      expect(ev2.payload.message.text).toBe('short again');
      expect(ev2.payload.message).not.toHaveProperty('textTruncated');
    });

    it(`a text of exactly ${EVENT_TEXT_MAX.toLocaleString('en')} characters is carried whole, without a textTruncated key`, async () => {
      const text = longText(EVENT_TEXT_MAX);
      const { result, events } = await during(H(), () => H().post('/messages', { chatId: c.id, text }));
      const m = ok(result, 201);
      const [ev] = ofType(events, 'message.created', m.id);
      expect(ev.payload.message.text).toBe(text);
      expect(ev.payload.message).not.toHaveProperty('textTruncated');
      expect(ev.payload.message).toEqual(m);
    });
  });

  describe(`[${factory.name}] v3 Messages: expand=tagged reads member records (spec "Message" expand; review fix: members:read)`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);

    it('a token with messages:read alone gets the message but 403 permission_denied (missing members:read) on expand=tagged, on GET and on the list; with members:read too it is answered', async () => {
      const c = await group({ name: 'Tag scopes', memberIds: [H().a.regular.id] });
      const m = await message({ chatId: c.id, text: `Hi <@${H().a.regular.id}>` });
      const narrow = (await H().api.admin.issueToken(H().a.owner.id, { scopes: ['messages:read'] })).token;
      expect(ok(await H().get(`/messages/${m.id}`, { token: narrow })).tagged).toEqual([H().a.regular.id]);
      const denied = problem(await H().get(`/messages/${m.id}?expand=tagged`, { token: narrow }), 403, 'permission_denied');
      expect(denied.missingPermissions).toEqual(['members:read']);
      problem(await H().get(`/messages?chatId[eq]=${c.id}&expand=tagged`, { token: narrow }), 403, 'permission_denied');
      const wide = (await H().api.admin.issueToken(H().a.owner.id, { scopes: ['messages:read', 'members:read'] })).token;
      const got = ok(await H().get(`/messages/${m.id}?expand=tagged`, { token: wide }));
      expect(got.tagged.map((x: any) => x.id)).toEqual([H().a.regular.id]);
      expect(ok(await H().get(`/messages?chatId[eq]=${c.id}&expand=tagged`, { token: wide })).data.find((x: any) => x.id === m.id).tagged.map((x: any) => x.id)).toEqual([H().a.regular.id]);
    });
  });

  describe(`[${factory.name}] v3 Messages: isEdited, lastMessageAt and files uploaded onto a message (docs/not-shown.md "Editing and deleting messages", "Chat fields", "files of a message")`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);
    let p: any;
    let c: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Edit flags P', members: [H().a.regular.id] });
      c = await group({ name: 'Edit flags', memberIds: [H().a.regular.id] });
    });

    it('isEdited stays false after a PATCH of hideLinkPreview only, of files only, and of the same text; a changed text makes it true for good', async () => {
      const f = ok(await H().upload('flag', { name: 'flag.txt', projectId: p.id }), 201);
      const m = await message({ chatId: c.id, text: 'Unchanged words' });
      H().clock.advance(1000);
      expect(ok(await H().patch(`/messages/${m.id}`, { hideLinkPreview: true }))).toMatchObject({ hideLinkPreview: true, isEdited: false });
      expect(ok(await H().patch(`/messages/${m.id}`, { files: [f.id] }))).toMatchObject({ files: [f.id], isEdited: false });
      expect(ok(await H().patch(`/messages/${m.id}`, { text: 'Unchanged words' }))).toMatchObject({ text: 'Unchanged words', isEdited: false });
      expect(ok(await H().patch(`/messages/${m.id}`, { files: [], hideLinkPreview: false, text: 'Unchanged words' })).isEdited).toBe(false);
      expect(ok(await H().get(`/messages/${m.id}`)).isEdited).toBe(false);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&isEdited[eq]=true`))).not.toContain(m.id);
      const { result, events } = await during(H(), () => H().patch(`/messages/${m.id}`, { text: 'Changed words' }));
      expect(ok(result).isEdited).toBe(true);
      expect(ofType(events, 'message.updated', m.id)[0].payload.message.isEdited).toBe(true);
      expect(ok(await H().patch(`/messages/${m.id}`, { hideLinkPreview: true })).isEdited).toBe(true);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&isEdited[eq]=true`))).toContain(m.id);
    });

    it('a reply to a chat message and a comment on a file of a chat message bump the chat\'s lastMessageAt to their createdAt (updatedAt unchanged, no chat.updated)', async () => {
      const room = await group({ name: 'Reply bump', memberIds: [H().a.regular.id] });
      H().clock.advance(60_000);
      const m = await message({ chatId: room.id, text: 'Parent' });
      expect(ok(await H().get(`/chats/${room.id}`)).lastMessageAt).toBe(m.createdAt);
      H().clock.advance(60_000);
      const { result, events } = await during(H(), () => H().post('/messages', { parentMessageId: m.id, text: 'Reply' }, { token: H().a.regular.token }));
      const r = ok(result, 201);
      expect(r.createdAt).not.toBe(m.createdAt);
      const after = ok(await H().get(`/chats/${room.id}`));
      expect(after.lastMessageAt).toBe(r.createdAt);
      expect(after.updatedAt).toBe(room.updatedAt);
      expect(ofType(events, 'chat.updated')).toEqual([]);
      const f = ok(await H().upload('attached', { name: 'attached.txt', messageId: m.id }), 201);
      H().clock.advance(60_000);
      const onFile = await message({ fileId: f.id, text: 'On the attachment' }, H().a.regular.token);
      expect(onFile.createdAt).not.toBe(r.createdAt);
      expect(ok(await H().get(`/chats/${room.id}`)).lastMessageAt).toBe(onFile.createdAt);
    });

    it('a file uploaded with messageId is one of that message\'s files (message.files.added); so is one made from content; PATCH files [] detaches them and the files stay', async () => {
      const m = await message({ chatId: c.id, text: 'Attach here' });
      expect(m.files).toEqual([]);
      const { result, events } = await during(H(), () => H().upload('uploaded onto', { name: 'onto.txt', messageId: m.id }));
      const f = ok(result, 201);
      expect(f.messageId).toBe(m.id);
      expect(ok(await H().get(`/messages/${m.id}`)).files).toEqual([f.id]);
      const [added] = ofType(events, 'message.files.added', m.id);
      expect(added, JSON.stringify(events.map((e) => e.type))).toBeDefined();
      expect(added).toMatchObject({ aggregateType: 'message', aggregateId: m.id });
      expect(added.payload).toEqual({ parentId: m.id, relatedId: f.id, relation: 'files' });
      expect(ok(await H().get(`/messages/${m.id}?expand=files`)).files.map((x: any) => x.id)).toEqual([f.id]);
      const fc = await during(H(), () => H().post('/files/from-content', { name: 'content.txt', content: 'from content', messageId: m.id }));
      const g = ok(fc.result, 201);
      expect(ofType(fc.events, 'message.files.added', m.id).map((e) => e.payload.relatedId)).toEqual([g.id]);
      expect([...ok(await H().get(`/messages/${m.id}`)).files].sort()).toEqual([f.id, g.id].sort());
      const none = await during(H(), () => H().patch(`/messages/${m.id}`, { files: [] }));
      expect(ok(none.result).files).toEqual([]);
      expect(ofType(none.events, 'message.files.removed', m.id).map((e) => e.payload.relatedId).sort()).toEqual([f.id, g.id].sort());
      for (const file of [f, g]) expect(ok(await H().get(`/files/${file.id}`))).toMatchObject({ id: file.id, messageId: m.id });
    });

    it('deleting a chat destroys a file attached to one of its messages, and a task comment whose files listed that file lists it no more', async () => {
      const room = await group({ name: 'Doomed room', memberIds: [H().a.regular.id] });
      const m = await message({ chatId: room.id, text: 'with a file' });
      const f = ok(await H().upload('doomed', { name: 'doomed.txt', messageId: m.id }), 201);
      const t = await H().task(p.id, { name: 'Links elsewhere' });
      const keep = ok(await H().upload('kept', { name: 'kept.txt', projectId: p.id }), 201);
      const tm = await message({ taskId: t.id, text: 'see both', files: [f.id, keep.id] });
      expect([...tm.files].sort()).toEqual([f.id, keep.id].sort());
      const { result, events } = await during(H(), () => H().del(`/chats/${room.id}`));
      ok(result, 204);
      expect(events.filter((e) => e.aggregateId === f.id).map((e) => e.type)).toEqual(['file.removed']);
      problem(await H().get(`/files/${f.id}`), 404, 'resource_not_found');
      problem(await H().get(`/messages/${m.id}`), 404, 'resource_not_found');
      expect(ok(await H().get(`/messages/${tm.id}`)).files).toEqual([keep.id]);
      expect(ok(await H().get(`/messages/${tm.id}?expand=files`)).files.map((x: any) => x.id)).toEqual([keep.id]);
      expect(ok(await H().get(`/messages?taskId[eq]=${t.id}`)).data.map((x: any) => x.files)).toEqual([[keep.id]]);
      // The link is gone, not merely hidden: the set can be written again without the dead id.
      expect(ok(await H().patch(`/messages/${tm.id}`, { files: [keep.id] })).files).toEqual([keep.id]);
    });
  });

  describe(`[${factory.name}] v3 Messages: annotation threads only for files every project member sees, and a destroyed thread task is forgotten (docs/not-shown.md "Annotation threads")`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Threads P', members: [H().a.regular.id, H().a.client.id] });
    });
    const threadTasks = async () => ok(await H().get(`/tasks?projectId=${p.id}&name[startsWith]=Annotations&limit=200`)).data;

    it('a file of a private document: the first comment on its annotation makes no thread task (taskId and annotationTaskId stay null, no task.created, no "Annotations: …" task in the project)', async () => {
      const before = (await threadTasks()).length;
      const d = ok(await H().post('/documents', { title: 'Private review', projectId: p.id, accessType: 'private' }, { token: H().a.regular.token }), 201);
      const f = ok(await H().upload('secret design', { name: 'secret-design.png', documentId: d.id }, H().a.regular.token), 201);
      expect(f.projectId).toBe(p.id);
      const a = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }, { token: H().a.regular.token }), 201);
      const { result, events } = await during(H(), () => H().post('/messages', { annotationId: a.id, text: 'Only I see this' }, { token: H().a.regular.token }));
      ok(result, 201);
      expect(ofType(events, 'task.created')).toEqual([]);
      expect(ok(await H().get(`/annotations/${a.id}`, { token: H().a.regular.token })).taskId).toBeNull();
      expect(ok(await H().get(`/files/${f.id}`, { token: H().a.regular.token })).annotationTaskId).toBeNull();
      expect((await threadTasks()).length).toBe(before);
      expect((await threadTasks()).map((x: any) => x.name)).not.toContain('Annotations: secret-design.png');
    });

    it('a file of a chat message: no thread task either', async () => {
      const before = (await threadTasks()).length;
      const room = await group({ name: 'Thread room', memberIds: [H().a.regular.id] });
      const m = await message({ chatId: room.id, text: 'a file' });
      const f = ok(await H().upload('chat design', { name: 'chat-design.png', messageId: m.id }), 201);
      const a = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }), 201);
      const { result, events } = await during(H(), () => H().post('/messages', { annotationId: a.id, text: 'here' }));
      ok(result, 201);
      expect(ofType(events, 'task.created')).toEqual([]);
      expect(ok(await H().get(`/annotations/${a.id}`)).taskId).toBeNull();
      expect(ok(await H().get(`/files/${f.id}`)).annotationTaskId).toBeNull();
      expect((await threadTasks()).length).toBe(before);
    });

    it('after the thread task is deleted, the file\'s annotationTaskId and the annotations\' taskId are null (with their updated events); the next first comment makes a new task', async () => {
      const f = ok(await H().upload('review me', { name: 'review-me.png', projectId: p.id }), 201);
      const a1 = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }), 201);
      const a2 = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: { shape: 'POINT', x: 1, y: 1 } }), 201);
      await message({ annotationId: a1.id, text: 'first' });
      const first = ok(await H().get(`/annotations/${a1.id}`)).taskId;
      expect(typeof first).toBe('string');
      expect(ok(await H().get(`/files/${f.id}`)).annotationTaskId).toBe(first);

      const del = await during(H(), () => H().del(`/tasks/${first}`));
      ok(del.result, 204);
      problem(await H().get(`/tasks/${first}`), 404, 'resource_not_found');
      expect(ok(await H().get(`/files/${f.id}`)).annotationTaskId).toBeNull();
      expect(ok(await H().get(`/annotations/${a1.id}`)).taskId).toBeNull();
      expect(ofType(del.events, 'file.updated', f.id).map((e) => e.payload.file.annotationTaskId)).toEqual([null]);
      expect(ofType(del.events, 'annotation.updated', a1.id).map((e) => e.payload.annotation.taskId)).toEqual([null]);
      expect(ids(await H().get(`/files?annotationTaskId[eq]=${first}`))).toEqual([]);

      const again = await during(H(), () => H().post('/messages', { annotationId: a2.id, text: 'second thread' }));
      ok(again.result, 201);
      const second = ok(await H().get(`/annotations/${a2.id}`)).taskId;
      expect(typeof second).toBe('string');
      expect(second).not.toBe(first);
      expect(ofType(again.events, 'task.created', second)).toHaveLength(1);
      expect(ok(await H().get(`/tasks/${second}`))).toMatchObject({ id: second, name: 'Annotations: review-me.png', projectId: p.id });
      expect(ok(await H().get(`/files/${f.id}`)).annotationTaskId).toBe(second);
      // The older annotation joins the new thread on its next comment.
      await message({ annotationId: a1.id, text: 'back again' });
      expect(ok(await H().get(`/annotations/${a1.id}`)).taskId).toBe(second);
    });

    it('a thread task moved to another project and destroyed with it (project purge) is forgotten as well: the next first comment on the file makes a new task in the file\'s project', async () => {
      const q = await H().project({ name: 'Thread elsewhere' });
      const f = ok(await H().upload('moved thread', { name: 'moved-thread.png', projectId: p.id }), 201);
      const a1 = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }), 201);
      const a2 = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }), 201);
      await message({ annotationId: a1.id, text: 'first' });
      const first = ok(await H().get(`/annotations/${a1.id}`)).taskId;
      expect(typeof first).toBe('string');
      ok(await H().patch(`/tasks/${first}`, { projectId: q.id }));
      ok(await H().del(`/projects/${q.id}`), 204);
      H().clock.advance(31 * 24 * HOUR);
      await H().api.jobs.purge();
      problem(await H().get(`/tasks/${first}`), 404, 'resource_not_found');
      const again = await during(H(), () => H().post('/messages', { annotationId: a2.id, text: 'a new thread' }));
      ok(again.result, 201);
      const second = ok(await H().get(`/annotations/${a2.id}`)).taskId;
      expect(typeof second).toBe('string');
      expect(second).not.toBe(first);
      expect(ofType(again.events, 'task.created', second)).toHaveLength(1);
      expect(ok(await H().get(`/tasks/${second}`))).toMatchObject({ name: 'Annotations: moved-thread.png', projectId: p.id });
      expect(ok(await H().get(`/files/${f.id}`)).annotationTaskId).toBe(second);
    });

    it('a thread task destroyed by a project purge leaves no id behind: the file\'s annotationTaskId and the annotations\' taskId are null afterwards', async () => {
      const q = await H().project({ name: 'Thread purged' });
      const f = ok(await H().upload('purged thread', { name: 'purged-thread.png', projectId: p.id }), 201);
      const a = ok(await H().post('/annotations', { type: 'image', fileId: f.id, position: {} }), 201);
      await message({ annotationId: a.id, text: 'first' });
      const first = ok(await H().get(`/annotations/${a.id}`)).taskId;
      expect(typeof first).toBe('string');
      ok(await H().patch(`/tasks/${first}`, { projectId: q.id }));
      ok(await H().del(`/projects/${q.id}`), 204);
      H().clock.advance(31 * 24 * HOUR);
      await H().api.jobs.purge();
      problem(await H().get(`/tasks/${first}`), 404, 'resource_not_found');
      expect({ file: ok(await H().get(`/files/${f.id}`)).annotationTaskId, annotation: ok(await H().get(`/annotations/${a.id}`)).taskId }).toEqual({ file: null, annotation: null });
      expect(ids(await H().get(`/files?annotationTaskId[eq]=${first}`))).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Messages: a chat's messages list without the project bound (chatId), and the projectId list parameter (spec "Limits": ${ACCESSIBLE_PROJECTS_MAX} projects for workspace-wide lists)`, () => {
    const H = harnessPerDescribe(factory);
    const group = groupOf(H);
    const message = messageOf(H);
    let p: any;
    let q: any;
    let c: any;
    let chatMsgs: string[];
    let pComments: string[];
    let qComment: any;
    let pFile: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Bound P', accessType: 'workspace' });
      q = await H().project({ name: 'Bound Q', accessType: 'workspace' });
      c = await group({ name: 'Unbound room', memberIds: [H().a.owner.id] }, H().a.regular.token);
      H().clock.advance(1000);
      const m1 = await message({ chatId: c.id, text: 'one' }, H().a.regular.token);
      H().clock.advance(1000);
      const m2 = await message({ chatId: c.id, text: 'two' });
      chatMsgs = [m2.id, m1.id, ...ids(await H().get(`/messages?chatId[eq]=${c.id}&subtype[eq]=hello`, { token: H().a.regular.token }))];
      const tp = await H().task(p.id, { name: 'P thread' });
      const tq = await H().task(q.id, { name: 'Q thread' });
      const c1 = await message({ taskId: tp.id, text: 'P comment' }, H().a.regular.token);
      H().clock.advance(1000);
      const c2 = await message({ parentMessageId: c1.id, text: 'P reply' });
      pComments = [c2.id, c1.id];
      qComment = await message({ taskId: tq.id, text: 'Q comment' });
      pFile = ok(await H().upload('p file', { name: 'p.txt', projectId: p.id }), 201);
      ok(await H().upload('q file', { name: 'q.txt', projectId: q.id }), 201);
      // 1,000 more projects the regular member may open.
      await copyProjects(H(), p.id, ACCESSIBLE_PROJECTS_MAX, 'chatbulk');
    });

    it(`the setup holds: a workspace-wide message list by the regular member (over ${ACCESSIBLE_PROJECTS_MAX} projects open) is 400 accessible_project_ids_exceeded`, async () => {
      problem(await H().get('/messages', { token: H().a.regular.token }), 400, 'accessible_project_ids_exceeded');
    });

    it('chatId[eq] and chatId[in] list the chat\'s messages for a regular member who opens over 1,000 projects, and still only for members', async () => {
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}`, { token: H().a.regular.token }))).toEqual(chatMsgs);
      expect(ids(await H().get(`/messages?chatId[in]=${c.id}`, { token: H().a.regular.token }))).toEqual(chatMsgs);
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}&authorId[eq]=${H().a.owner.id}`, { token: H().a.regular.token }))).toEqual([chatMsgs[0]]);
      const other = await newMember(H(), 'Not in the room');
      expect(ids(await H().get(`/messages?chatId[eq]=${c.id}`, { token: other.token }))).toEqual([]);
    });

    it('GET /messages?projectId=… lists that project\'s comments (and their replies), nothing of other projects or chats; a project the caller cannot open is 403', async () => {
      expect(ids(await H().get(`/messages?projectId=${p.id}`, { token: H().a.regular.token }))).toEqual(pComments);
      expect(ids(await H().get(`/messages?projectId=${p.id}`))).toEqual(pComments);
      expect(ids(await H().get(`/messages?projectId=${q.id}`, { token: H().a.regular.token }))).toEqual([qComment.id]);
      const closed = await H().project({ name: 'Bound closed', accessType: 'limited' });
      problem(await H().get(`/messages?projectId=${closed.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');
    });

    it('GET /files?projectId=… lists that project\'s files for the same caller', async () => {
      expect(ids(await H().get(`/files?projectId=${p.id}`, { token: H().a.regular.token }))).toEqual([pFile.id]);
    });
  });
}
