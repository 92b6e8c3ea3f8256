import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startQuickstart, type Seed } from './start';
import { makePng } from '@pmapi/conformance';

/**
 * Issue 12 through the quickstart, on SQLite (bytes in memory) and on
 * Postgres (bytes in a directory): a PNG uploaded the spec's way (spec
 * "File": upload URL, PUT, create with the uploadKey) comes back
 * byte-identical and gets a thumbnail from the quickstart's file jobs; a
 * group chat carries a message.
 */

const pgUrl = inject('pgUrl');

const stores = [
  { name: 'sqlite', args: [] as string[] },
  ...(pgUrl ? [{ name: 'postgres', args: ['--db', pgUrl] }] : []),
];

describe.each(stores)('quickstart [$name]: files with real bytes, thumbnails and chats (issue 12)', ({ args }) => {
  let child: ChildProcess;
  let seed: Seed;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pmapi-qs-files-'));
    ({ child, seed } = await startQuickstart([...args, ...(args.length ? ['--files', dir] : [])]));
  });
  afterAll(() => {
    child?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (path: string, token: string, body?: unknown) => {
    const r = await fetch(`${seed.baseUrl}/api/v3${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as any };
  };

  it('upload URL → PUT → POST /files; the url gives the bytes back; the file jobs make a thumbnail', async () => {
    const owner = seed.teams[0]!.members[0]!.token;
    const project = await call('/projects', owner, { name: `Files ${Date.now()}` });
    expect(project.status).toBe(201);
    const bytes = makePng(640, 480);
    const slot = await call('/files/upload-url', owner, { size: bytes.byteLength });
    expect(slot.status).toBe(200);
    expect(slot.body.url.startsWith(`${seed.baseUrl}/api/v3/blobs/`)).toBe(true);
    const put = await fetch(slot.body.url, { method: 'PUT', body: bytes });
    expect(put.status).toBe(200);
    const file = await call('/files', owner, { uploadKey: slot.body.uploadKey, size: bytes.byteLength, name: 'diagram.png', projectId: project.body.id });
    expect(file.status).toBe(201);
    expect(file.body).toMatchObject({ name: 'diagram.png', size: bytes.byteLength, processed: false, thumbnail: null, projectId: project.body.id });
    const back = await fetch(file.body.url);
    expect(back.status).toBe(200);
    expect(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    // The quickstart runs the file jobs every two seconds.
    let now = file.body;
    for (let i = 0; i < 50 && !now.processed; i++) {
      await new Promise((r) => setTimeout(r, 200));
      now = (await call(`/files/${file.body.id}`, owner)).body;
    }
    expect(now.processed).toBe(true);
    expect(typeof now.thumbnail).toBe('string');
    const thumb = Buffer.from(await (await fetch(now.thumbnail)).arrayBuffer());
    expect([...thumb.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
  });

  it('a group chat with a member; a message there bumps lastMessageAt; the member sees it, another workspace does not', async () => {
    const [acme, globex] = seed.teams;
    const owner = acme!.members[0]!;
    const regular = acme!.members[1]!;
    const chat = await call('/chats', owner.token, { name: 'Launch room', memberIds: [regular.id] });
    expect(chat.status).toBe(201);
    const msg = await call('/messages', owner.token, { chatId: chat.body.id, text: `Ready, <@${regular.id}>?` });
    expect(msg.status).toBe(201);
    expect(msg.body.tagged).toEqual([regular.id]);
    const seen = await call(`/messages?chatId[eq]=${chat.body.id}&subtype[null]=true`, regular.token);
    expect(seen.body.data.map((m: any) => m.id)).toEqual([msg.body.id]);
    expect((await call(`/chats/${chat.body.id}`, regular.token)).body.lastMessageAt).toBe(msg.body.createdAt);
    expect((await call(`/chats/${chat.body.id}`, globex!.members[0]!.token)).status).toBe(404);
  });
  it('documents (append, edit-text, attach to a task), create-from-content, an annotation whose first comment opens its thread task, and a direct message', async () => {
    const [acme] = seed.teams;
    const owner = acme!.members[0]!;
    const regular = acme!.members[1]!;
    const project = await call('/projects', owner.token, { name: `Docs ${Date.now()}`, members: [regular.id] });
    expect(project.status).toBe(201);
    const doc = await call('/documents', owner.token, { title: 'Plan', projectId: project.body.id, body: '# Plan\n' });
    expect(doc.status).toBe(201);
    expect((await call(`/documents/${doc.body.id}/append`, owner.token, { text: 'Step one.' })).status).toBe(200);
    expect((await call(`/documents/${doc.body.id}/edit-text`, owner.token, { oldText: 'one', newText: 'two' })).status).toBe(200);
    expect((await call(`/documents/${doc.body.id}`, regular.token)).body.body).toBe('# Plan\nStep two.');
    const task = await call('/tasks', owner.token, { name: 'Write it', projectId: project.body.id });
    expect((await call(`/tasks/${task.body.id}/attach-document`, owner.token, { documentId: doc.body.id })).status).toBe(200);
    expect((await call(`/documents?taskId[eq]=${task.body.id}`, owner.token)).body.data.map((d: any) => d.id)).toEqual([doc.body.id]);
    const text = await call('/files/from-content', owner.token, { name: 'notes.txt', content: 'plain notes', projectId: project.body.id });
    expect(text.status).toBe(201);
    expect(await (await fetch(text.body.url)).text()).toBe('plain notes');
    const note = await call('/annotations', owner.token, { type: 'image', fileId: text.body.id, position: { shape: 'POINT', x: 10, y: 20 } });
    expect(note.status).toBe(201);
    expect((await call('/messages', regular.token, { annotationId: note.body.id, text: 'Typo here' })).status).toBe(201);
    const thread = (await call(`/annotations/${note.body.id}?expand=task`, owner.token)).body;
    expect(thread.task).toMatchObject({ name: 'Annotations: notes.txt', projectId: project.body.id });
    const dm = await call('/messages', owner.token, { recipientMemberId: regular.id, text: 'Thanks!' });
    expect(dm.status).toBe(201);
    const inbox = await call(`/chats?recipientMemberId[eq]=${owner.id}`, regular.token);
    expect(inbox.body.data.map((c: any) => c.id)).toEqual([dm.body.chatId]);
  });
});
