import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createPmapi, defineResource, f, type Pmapi } from '@pmapi/core';
import { createTable, tableOf } from '@pmapi/core/sql';
import type { Reply, StoreFactory } from '../../kit';
import { harnessPerDescribe } from '../shared';
import { expectOk as ok, expectProblem as problem } from './helpers';

/**
 * References to rows a resource's routes never serve (issue 14). A project's
 * discussion chat is `unlisted`: spec "Chat" — project chats are not returned
 * by list or get — so `/chats/{id}` answers 404 for it. A body reference
 * naming such a row is refused exactly like a missing id (spec "Errors":
 * 404 resource_not_found naming the field; a relation set: 404
 * m2m_target_not_found with `missing`), unless the field declares
 * `reachesUnlisted`: a message's `chatId` (messages are posted to the
 * discussion by its members, docs/not-shown.md "Project discussion chats").
 *
 * The built-in resources hold one plain reference to chats (a message's
 * chatId, which may reach them); the refusal is shown through resources
 * declared here, on tables of their own, served by a second API over the
 * harness's store — the way any added resource gets the rule.
 */

/** A note about a chat: a plain reference and a set of chats. */
const chatNote = defineResource({
  name: 'chatNote',
  path: 'chat-notes',
  fields: {
    text: f.string({ max: 200 }),
    chatId: f.ref('chat', { nullable: true }),
    chats: f.refs('chats', { target: 'chat' }),
  },
  filters: {},
  defaultSort: 'createdAt',
});

/** The same, but its reference deliberately reaches unlisted chats. */
const chatPin = defineResource({
  name: 'chatPin',
  path: 'chat-pins',
  fields: {
    text: f.string({ max: 200 }),
    chatId: f.ref('chat', { nullable: true, reachesUnlisted: true }),
  },
  filters: {},
  defaultSort: 'createdAt',
});

export function unlistedReferencesSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 References to unlisted rows (spec "Chat": project chats are never served; "Errors": resource_not_found)`, () => {
    const H = harnessPerDescribe(factory);
    let api: Pmapi;
    let discussion: string;
    let group: string;
    let project: any;
    /** A call to the API that knows the declared resources, as `token` (default A's owner). */
    const call = async (method: string, url: string, body?: unknown, token = H().a.owner.token): Promise<Reply> => {
      const res = await api.handle({
        method, url: `/api/v3${url}`, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, headers: res.headers, body: res.body === undefined ? undefined : JSON.parse(String(res.body)) };
    };

    beforeAll(async () => {
      const h = H();
      for (const res of [chatNote, chatPin]) await createTable(h.store.db, h.store.dialect, res.table, tableOf(res)).execute();
      api = await createPmapi({ store: { ...h.store, close: async () => undefined }, clock: h.clock, rateLimiter: false, resources: [chatNote, chatPin], onError: (e) => console.error(e) });
      project = await h.project({ name: 'Discussed', members: [h.a.regular.id] });
      discussion = project.discussionChatId;
      group = ok(await h.post('/chats', { name: 'Open group', memberIds: [h.a.regular.id] }), 201).id;
    });
    afterAll(() => api?.close());

    it('the discussion chat is unlisted: /chats/{id} is 404 even for its members (the premise)', async () => {
      expect(typeof discussion).toBe('string');
      problem(await call('GET', `/chats/${discussion}`), 404, 'resource_not_found');
      ok(await call('GET', `/chats/${group}`));
    });

    it('a plain reference naming a discussion chat is 404 resource_not_found with the field, as a missing id is, on create; nothing is written', async () => {
      const refused = problem(await call('POST', '/chat-notes', { text: 'about the discussion', chatId: discussion }), 404, 'resource_not_found');
      const missing = problem(await call('POST', '/chat-notes', { text: 'about nothing', chatId: 'nosuchchat00' }), 404, 'resource_not_found');
      expect(refused.field).toBe('chatId');
      expect(missing.field).toBe('chatId');
      expect(Object.keys(refused).sort()).toEqual(Object.keys(missing).sort());
      // Its members are refused too: being allowed to read the messages does not make the row addressable.
      problem(await call('POST', '/chat-notes', { chatId: discussion }, H().a.regular.token), 404, 'resource_not_found');
      expect(ok(await call('GET', '/chat-notes')).data).toEqual([]);
      // A chat the routes serve is fine.
      expect(ok(await call('POST', '/chat-notes', { text: 'about the group', chatId: group }), 201).chatId).toBe(group);
    });

    it('on update too: PATCH pointing a reference at a discussion chat is 404 on the field and the row keeps its value', async () => {
      const note = ok(await call('POST', '/chat-notes', { text: 'movable', chatId: group }), 201);
      const r = problem(await call('PATCH', `/chat-notes/${note.id}`, { chatId: discussion }), 404, 'resource_not_found');
      expect(r.field).toBe('chatId');
      expect(ok(await call('GET', `/chat-notes/${note.id}`)).chatId).toBe(group);
      expect(ok(await call('PATCH', `/chat-notes/${note.id}`, { chatId: null })).chatId).toBeNull();
    });

    it('a relation set naming a discussion chat is 404 m2m_target_not_found listing it as missing; nothing is linked', async () => {
      const r = problem(await call('POST', '/chat-notes', { text: 'a set', chats: [group, discussion] }), 404, 'm2m_target_not_found');
      expect(r.missing).toEqual([discussion]);
      const note = ok(await call('POST', '/chat-notes', { text: 'a fine set', chats: [group] }), 201);
      expect(note.chats).toEqual([group]);
      problem(await call('PATCH', `/chat-notes/${note.id}`, { chats: [discussion] }), 404, 'm2m_target_not_found');
      expect(ok(await call('GET', `/chat-notes/${note.id}`)).chats).toEqual([group]);
    });

    it('a field declaring reachesUnlisted may name it (the other rules still apply: another workspace\'s chat is 404)', async () => {
      expect(ok(await call('POST', '/chat-pins', { text: 'pinned', chatId: discussion }), 201).chatId).toBe(discussion);
      const elsewhere = await H().project({ name: 'Elsewhere' });
      problem(await call('POST', '/chat-pins', { chatId: elsewhere.discussionChatId }, H().b.owner.token), 404, 'resource_not_found');
    });

    it('the built-in reference that reaches it still works: members post to the discussion with chatId and reply to its messages; outsiders get 404', async () => {
      const h = H();
      const m = ok(await h.post('/messages', { chatId: discussion, text: 'In the discussion' }, { token: h.a.regular.token }), 201);
      expect(m.chatId).toBe(discussion);
      const reply = ok(await h.post('/messages', { parentMessageId: m.id, text: 'A reply' }), 201);
      expect(reply.parentMessageId).toBe(m.id);
      problem(await h.post('/messages', { chatId: discussion, text: 'Not a member' }, { token: h.a.client.token }), 404, 'resource_not_found');
      problem(await h.post('/messages', { chatId: discussion, text: 'Other workspace' }, { token: h.b.owner.token }), 404, 'resource_not_found');
    });
  });
}
