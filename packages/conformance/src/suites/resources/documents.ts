import { describe, it, expect, beforeAll } from 'vitest';
import type { Reply, StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';

/**
 * Documents and document folders (spec "Other resources": a document's
 * accessType cannot change after creation; its body is settable at creation
 * and afterwards only extended by the append operation; a text-edit operation
 * exists; spec "Events": document.append, document.editText), with the
 * decisions taken where the fields are not shown (docs/not-shown.md "Documents").
 */

/** Limits of the decisions in docs/not-shown.md "Documents" (kept here as data: tests never read the spec). */
const TITLE_MAX = 255;
const BODY_MAX = 1_000_000;
const FOLDER_DEPTH_MAX = 16;

const ids = (r: Reply): string[] => ok(r).data.map((x: any) => x.id);

export function documentsSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Documents: fields, accessType and body rules (spec "Other resources")`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    const doc = async (body: Record<string, unknown> = {}, token?: string) => ok(await H().post('/documents', { title: 'Doc', projectId: p.id, ...body }, { token }), 201);
    beforeAll(async () => {
      p = await H().project({ name: 'Docs P', members: [H().a.owner.id, H().a.regular.id, H().a.client.id] });
    });

    it('POST /documents → 201: title trimmed, accessType project by default, createdById the caller; GET answers the same plus the body as sent', async () => {
      const d = ok(await H().post('/documents', { title: '  Release notes \t', projectId: p.id, body: '# Notes\n\nFirst.' }), 201);
      expect(d).toMatchObject({ title: 'Release notes', projectId: p.id, accessType: 'project', folderId: null, createdById: H().a.owner.id, purgeAt: null });
      expect(ok(await H().get(`/documents/${d.id}`))).toEqual({ ...d, body: '# Notes\n\nFirst.' });
      const empty = await doc();
      expect(ok(await H().get(`/documents/${empty.id}`)).body).toBe('');
    });

    it('the body is served by GET /documents/{id} alone (like a project\'s defaultStatusId): never by lists, expands, write answers or event payloads; fields[documents] selects it on GET', async () => {
      const { result, events } = await during(H(), () => H().post('/documents', { title: 'Big', projectId: p.id, body: 'b'.repeat(5000) }));
      const d = ok(result, 201);
      expect(d).not.toHaveProperty('body');
      expect(ofType(events, 'document.created', d.id)[0].payload.document).not.toHaveProperty('body');
      const listed = ok(await H().get(`/documents?projectId=${p.id}&limit=200`)).data.find((x: any) => x.id === d.id);
      expect(listed).toEqual(d);
      const folder = ok(await H().post('/document-folders', { name: 'Holder', projectId: p.id }), 201);
      const moved = await during(H(), () => H().patch(`/documents/${d.id}`, { folderId: folder.id }));
      expect(ok(moved.result)).not.toHaveProperty('body');
      expect(ofType(moved.events, 'document.updated', d.id)[0].payload.document).not.toHaveProperty('body');
      const expanded = ok(await H().get(`/document-folders/${folder.id}?expand=documents`)).documents;
      expect(expanded.map((x: any) => x.id)).toEqual([d.id]);
      expect(expanded[0]).not.toHaveProperty('body');
      expect(ok(await H().get(`/documents/${d.id}?fields[documents]=title`))).toEqual({ id: d.id, title: 'Big' });
      expect(ok(await H().get(`/documents/${d.id}?fields[documents]=body`))).toEqual({ id: d.id, body: 'b'.repeat(5000) });
    });

    it('title: required, 1-255 characters after trimming; a create without projectId is project_not_specified', async () => {
      invalid(await H().post('/documents', { projectId: p.id }), 'title', 'required');
      invalid(await H().post('/documents', { title: '   ', projectId: p.id }), 'title', 'too_small');
      invalid(await H().post('/documents', { title: 't'.repeat(TITLE_MAX + 1), projectId: p.id }), 'title', 'too_big');
      expect((await doc({ title: 't'.repeat(TITLE_MAX) })).title).toHaveLength(TITLE_MAX);
      problem(await H().post('/documents', { title: 'Nowhere' }), 400, 'project_not_specified');
    });

    it('accessType cannot change after creation: PATCH with another value is 400 immutable and changes nothing; the same value is accepted', async () => {
      const d = await doc({ accessType: 'project' });
      invalid(await H().patch(`/documents/${d.id}`, { accessType: 'private' }), 'accessType', 'immutable');
      expect(ok(await H().get(`/documents/${d.id}`)).accessType).toBe('project');
      expect(ok(await H().patch(`/documents/${d.id}`, { accessType: 'project', title: 'Same access' })).title).toBe('Same access');
      invalid(await H().post('/documents', { title: 'Bad', projectId: p.id, accessType: 'public' }), 'accessType', 'invalid_value');
    });

    it('the body is set at creation only: PATCH body is 400 immutable; longer than 1,000,000 characters is refused', async () => {
      const d = await doc({ body: 'Start.' });
      invalid(await H().patch(`/documents/${d.id}`, { body: 'Rewritten.' }), 'body', 'immutable');
      expect(ok(await H().get(`/documents/${d.id}`)).body).toBe('Start.');
      invalid(await H().post('/documents', { title: 'Huge', projectId: p.id, body: 'x'.repeat(BODY_MAX + 1) }), 'body', 'too_big');
    });

    it('append extends the body verbatim, bumps updatedAt and emits document.append (not document.updated) with the document', async () => {
      const d = await doc({ body: 'Line 1' });
      H().clock.advance(1000);
      const { result, events } = await during(H(), () => H().post(`/documents/${d.id}/append`, { text: '\nLine 2' }));
      const after = ok(result);
      expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(d.updatedAt));
      expect(ok(await H().get(`/documents/${d.id}`))).toEqual({ ...after, body: 'Line 1\nLine 2' });
      const [ev] = ofType(events, 'document.append', d.id);
      expect(ev.payload.document).toEqual(after);
      expect(ev.projectId).toBe(p.id);
      expect(ofType(events, 'document.updated')).toHaveLength(0);
    });

    it('append body is validated exactly (rule 13): text required and non-empty, unknown keys refused; expectedUpdatedAt guards it (409 stale_write)', async () => {
      const d = await doc({ body: 'Keep' });
      invalid(await H().post(`/documents/${d.id}/append`, {}), 'text', 'required');
      invalid(await H().post(`/documents/${d.id}/append`, { text: '' }), 'text', 'too_small');
      invalid(await H().post(`/documents/${d.id}/append`, { text: 'x', body: 'y' }), 'body', 'unrecognized_key');
      problem(await H().post(`/documents/${d.id}/append`, { text: 'x', expectedUpdatedAt: '2020-01-01T00:00:00.000Z' }), 409, 'stale_write');
      ok(await H().post(`/documents/${d.id}/append`, { text: '!', expectedUpdatedAt: d.updatedAt }));
      expect(ok(await H().get(`/documents/${d.id}`)).body).toBe('Keep!');
    });

    it('append that would take the body past 1,000,000 characters is refused and changes nothing', async () => {
      const d = await doc({ body: 'x'.repeat(BODY_MAX - 2) });
      invalid(await H().post(`/documents/${d.id}/append`, { text: 'abc' }), 'text', 'too_big');
      expect(ok(await H().get(`/documents/${d.id}`)).body).toHaveLength(BODY_MAX - 2);
      ok(await H().post(`/documents/${d.id}/append`, { text: 'ab' }));
      expect(ok(await H().get(`/documents/${d.id}`)).body).toHaveLength(BODY_MAX);
    });

    it('edit-text replaces the one occurrence of oldText and emits document.editText; absent is 409 conflict, several is 400 ambiguous_match unless replaceAll', async () => {
      const d = await doc({ body: 'alpha beta alpha gamma' });
      const { result, events } = await during(H(), () => H().post(`/documents/${d.id}/edit-text`, { oldText: 'beta', newText: 'BETA' }));
      ok(result);
      const text = async () => ok(await H().get(`/documents/${d.id}`)).body;
      expect(await text()).toBe('alpha BETA alpha gamma');
      expect(ofType(events, 'document.editText', d.id)).toHaveLength(1);
      problem(await H().post(`/documents/${d.id}/edit-text`, { oldText: 'delta', newText: 'x' }), 409, 'conflict');
      const amb = await H().post(`/documents/${d.id}/edit-text`, { oldText: 'alpha', newText: 'A' });
      invalid(amb, 'oldText', 'ambiguous_match');
      expect(amb.body.occurrences).toBe(2);
      ok(await H().post(`/documents/${d.id}/edit-text`, { oldText: 'alpha', newText: 'A', replaceAll: true }));
      expect(await text()).toBe('A BETA A gamma');
      ok(await H().post(`/documents/${d.id}/edit-text`, { oldText: ' gamma', newText: '' }));
      expect(await text()).toBe('A BETA A');
      invalid(await H().post(`/documents/${d.id}/edit-text`, { oldText: '', newText: 'x' }), 'oldText', 'too_small');
      invalid(await H().post(`/documents/${d.id}/edit-text`, { oldText: 'A' }), 'newText', 'required');
      invalid(await H().post(`/documents/${d.id}/edit-text`, { oldText: 'A', newText: 'B', mode: 'regex' }), 'mode', 'unrecognized_key');
    });

    it('operations on a trashed, unknown or other-workspace document are 404; a client (read-only on documents) gets 403 permission_denied', async () => {
      const d = await doc({ body: 'x' });
      ok(await H().del(`/documents/${d.id}`), 204);
      problem(await H().post(`/documents/${d.id}/append`, { text: 'y' }), 404, 'resource_not_found');
      problem(await H().post('/documents/nosuchdoc/append', { text: 'y' }), 404, 'resource_not_found');
      const e = await doc({ body: 'x' });
      problem(await H().post(`/documents/${e.id}/append`, { text: 'y' }, { token: H().b.owner.token }), 404, 'resource_not_found');
      problem(await H().post(`/documents/${e.id}/edit-text`, { oldText: 'x', newText: 'y' }, { token: H().a.client.token }), 403, 'permission_denied');
      problem(await H().post('/documents', { title: 'By client', projectId: p.id }, { token: H().a.client.token }), 403, 'permission_denied');
      expect(ok(await H().get(`/documents/${e.id}`, { token: H().a.client.token })).id).toBe(e.id);
    });

    it('a private document is its creator\'s alone: every other member, the workspace owner too, gets 404 and never lists or expands it', async () => {
      const folder = ok(await H().post('/document-folders', { name: 'Shared folder', projectId: p.id }), 201);
      const mine = await doc({ title: 'Diary', accessType: 'private', folderId: folder.id }, H().a.regular.token);
      const open = await doc({ title: 'Open', folderId: folder.id }, H().a.regular.token);
      expect(ok(await H().get(`/documents/${mine.id}`, { token: H().a.regular.token })).accessType).toBe('private');
      expect(ids(await H().get(`/documents?projectId=${p.id}&limit=200`, { token: H().a.regular.token }))).toContain(mine.id);
      for (const token of [H().a.owner.token, H().a.client.token]) {
        problem(await H().get(`/documents/${mine.id}`, { token }), 404, 'resource_not_found');
        const listed = ids(await H().get(`/documents?projectId=${p.id}&limit=200`, { token }));
        expect(listed).toContain(open.id);
        expect(listed).not.toContain(mine.id);
        const expanded = ok(await H().get(`/document-folders/${folder.id}?expand=documents`, { token }));
        expect(expanded.documents.map((x: any) => x.id)).toEqual([open.id]);
      }
      problem(await H().patch(`/documents/${mine.id}`, { title: 'Peek' }), 404, 'resource_not_found');
      problem(await H().post(`/documents/${mine.id}/append`, { text: 'Peek' }), 404, 'resource_not_found');
      problem(await H().del(`/documents/${mine.id}`), 404, 'resource_not_found');
      expect(ok(await H().get(`/documents/${mine.id}`, { token: H().a.regular.token })).title).toBe('Diary');
    });

    it('project access: a document of a limited project the caller is not in is 403 project_access_denied and left out of workspace-wide lists', async () => {
      const closed = await H().project({ name: 'Docs closed', accessType: 'limited', members: [H().a.owner.id] });
      const d = ok(await H().post('/documents', { title: 'Secret plan', projectId: closed.id }), 201);
      problem(await H().get(`/documents/${d.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');
      problem(await H().post('/documents', { title: 'In', projectId: closed.id }, { token: H().a.regular.token }), 403, 'project_access_denied');
      expect(ids(await H().get('/documents?limit=200', { token: H().a.regular.token }))).not.toContain(d.id);
      expect(ids(await H().get('/documents?limit=200'))).toContain(d.id);
    });

    it('folderId must be a folder of the same project (400 wrong_project); another workspace\'s folder is 404; it can move, also to null', async () => {
      const q = await H().project({ name: 'Docs Q' });
      const here = ok(await H().post('/document-folders', { name: 'Here', projectId: p.id }), 201);
      const there = ok(await H().post('/document-folders', { name: 'There', projectId: q.id }), 201);
      invalid(await H().post('/documents', { title: 'Misplaced', projectId: p.id, folderId: there.id }), 'folderId', 'wrong_project');
      const d = await doc({ folderId: here.id });
      invalid(await H().patch(`/documents/${d.id}`, { folderId: there.id }), 'folderId', 'wrong_project');
      const bq = ok(await H().post('/projects', { name: 'B docs' }, { token: H().b.owner.token }), 201);
      const foreign = ok(await H().post('/document-folders', { name: 'Foreign', projectId: bq.id }, { token: H().b.owner.token }), 201);
      problem(await H().patch(`/documents/${d.id}`, { folderId: foreign.id }), 404, 'resource_not_found');
      expect(ok(await H().patch(`/documents/${d.id}`, { folderId: null })).folderId).toBeNull();
      expect(ok(await H().get(`/documents?projectId=${p.id}&folderId[eq]=${here.id}`)).data).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Task operations attachDocument and detachDocument (spec "Events": task.attachDocument, task.detachDocument)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Attach P', members: [H().a.owner.id, H().a.regular.id] });
    });

    it('attach answers the task with a later updatedAt and emits task.attachDocument; documents filter by taskId; attaching again changes nothing', async () => {
      const t = await H().task(p.id, { name: 'Needs a spec' });
      const d = ok(await H().post('/documents', { title: 'Spec', projectId: p.id }), 201);
      H().clock.advance(1000);
      const { result, events } = await during(H(), () => H().post(`/tasks/${t.id}/attach-document`, { documentId: d.id }));
      const task = ok(result);
      expect(task.id).toBe(t.id);
      expect(Date.parse(task.updatedAt)).toBeGreaterThan(Date.parse(t.updatedAt));
      const [ev] = ofType(events, 'task.attachDocument', t.id);
      expect(ev.payload).toEqual({ task, documentId: d.id });
      expect(ev.projectId).toBe(p.id);
      expect(ids(await H().get(`/documents?taskId[eq]=${t.id}`))).toEqual([d.id]);
      const again = await during(H(), () => H().post(`/tasks/${t.id}/attach-document`, { documentId: d.id }));
      expect(ok(again.result).updatedAt).toBe(task.updatedAt);
      expect(again.events).toEqual([]);
      const off = await during(H(), () => H().post(`/tasks/${t.id}/detach-document`, { documentId: d.id }));
      expect(ok(off.result).id).toBe(t.id);
      expect(ofType(off.events, 'task.detachDocument', t.id)[0].payload.documentId).toBe(d.id);
      expect(ids(await H().get(`/documents?taskId[eq]=${t.id}`))).toEqual([]);
      expect((await during(H(), () => H().post(`/tasks/${t.id}/detach-document`, { documentId: d.id }))).events).toEqual([]);
    });

    it('the body is exactly {documentId} (rule 13); an unknown, other-workspace or another member\'s private document is 404', async () => {
      const t = await H().task(p.id, { name: 'Strict' });
      const d = ok(await H().post('/documents', { title: 'Doc', projectId: p.id }), 201);
      invalid(await H().post(`/tasks/${t.id}/attach-document`, {}), 'documentId', 'required');
      invalid(await H().post(`/tasks/${t.id}/attach-document`, { documentId: d.id, pinned: true }), 'pinned', 'unrecognized_key');
      const missing = problem(await H().post(`/tasks/${t.id}/attach-document`, { documentId: 'nosuchdoc' }), 404, 'resource_not_found');
      expect(missing.field).toBe('documentId');
      const priv = ok(await H().post('/documents', { title: 'Mine', projectId: p.id, accessType: 'private' }, { token: H().a.regular.token }), 201);
      problem(await H().post(`/tasks/${t.id}/attach-document`, { documentId: priv.id }), 404, 'resource_not_found');
      ok(await H().post(`/tasks/${t.id}/attach-document`, { documentId: priv.id }, { token: H().a.regular.token }));
      const bp = ok(await H().post('/projects', { name: 'B attach' }, { token: H().b.owner.token }), 201);
      const bd = ok(await H().post('/documents', { title: 'B doc', projectId: bp.id }, { token: H().b.owner.token }), 201);
      problem(await H().post(`/tasks/${t.id}/attach-document`, { documentId: bd.id }), 404, 'resource_not_found');
      problem(await H().post(`/tasks/${t.id}/attach-document`, { documentId: d.id }, { token: H().b.owner.token }), 404, 'resource_not_found');
    });

    it('deleting a task drops its attachments and keeps the documents', async () => {
      const t = await H().task(p.id, { name: 'Short-lived' });
      const d = ok(await H().post('/documents', { title: 'Survivor', projectId: p.id }), 201);
      ok(await H().post(`/tasks/${t.id}/attach-document`, { documentId: d.id }));
      ok(await H().del(`/tasks/${t.id}`), 204);
      expect(ids(await H().get(`/documents?taskId[eq]=${t.id}`))).toEqual([]);
      expect(ok(await H().get(`/documents/${d.id}`)).title).toBe('Survivor');
    });
  });

  describe(`[${factory.name}] v3 Document folders (spec "Other resources"; docs/not-shown.md "Document folders"): tree rules, delete keeps what the folder held, no events`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    const folder = async (body: Record<string, unknown>) => ok(await H().post('/document-folders', { name: 'F', projectId: p.id, ...body }), 201);
    beforeAll(async () => {
      p = await H().project({ name: 'Folders P' });
    });

    it('omitted order appends among siblings; parentId nests within the project only', async () => {
      const a = await folder({ name: 'A' });
      const b = await folder({ name: 'B' });
      expect(b.order).toBe(a.order + 1);
      const a1 = await folder({ name: 'A1', parentId: a.id });
      expect(a1.order).toBe(1);
      const q = await H().project({ name: 'Folders Q' });
      invalid(await H().post('/document-folders', { name: 'X', projectId: q.id, parentId: a.id }), 'parentId', 'wrong_project');
      expect(ids(await H().get(`/document-folders?projectId=${p.id}&parentId[null]=true`))).toEqual([a.id, b.id]);
      expect(ok(await H().get(`/document-folders/${a.id}?expand=folders,parent`)).folders.map((x: any) => x.id)).toEqual([a1.id]);
    });

    it('a folder cannot move under itself or one of its subfolders (400 folder_cycle)', async () => {
      const top = await folder({ name: 'Top' });
      const mid = await folder({ name: 'Mid', parentId: top.id });
      const low = await folder({ name: 'Low', parentId: mid.id });
      invalid(await H().patch(`/document-folders/${top.id}`, { parentId: top.id }), 'parentId', 'folder_cycle');
      invalid(await H().patch(`/document-folders/${top.id}`, { parentId: low.id }), 'parentId', 'folder_cycle');
      expect(ok(await H().get(`/document-folders/${top.id}`)).parentId).toBeNull();
      expect(ok(await H().patch(`/document-folders/${low.id}`, { parentId: top.id })).parentId).toBe(top.id);
    });

    it(`folders nest at most ${FOLDER_DEPTH_MAX} deep, counting the subtree of a moved folder (400 too_deep)`, async () => {
      let parent: any = await folder({ name: 'L1' });
      const chain = [parent];
      for (let i = 2; i <= FOLDER_DEPTH_MAX; i++) chain.push(parent = await folder({ name: `L${i}`, parentId: parent.id }));
      invalid(await H().post('/document-folders', { name: 'Too deep', projectId: p.id, parentId: parent.id }), 'parentId', 'too_deep');
      const other = await folder({ name: 'Other root' });
      await folder({ name: 'Other child', parentId: other.id });
      // other + its child under L15 would reach depth 17.
      invalid(await H().patch(`/document-folders/${other.id}`, { parentId: chain[FOLDER_DEPTH_MAX - 2].id }), 'parentId', 'too_deep');
      expect(ok(await H().patch(`/document-folders/${other.id}`, { parentId: chain[FOLDER_DEPTH_MAX - 3].id })).parentId).toBe(chain[FOLDER_DEPTH_MAX - 3].id);
    });

    it('deleting a folder moves its documents (trashed ones too, each with document.updated) and subfolders up to its parent; folders emit no events', async () => {
      const outer = await folder({ name: 'Outer' });
      const inner = await folder({ name: 'Inner', parentId: outer.id });
      const sub = await folder({ name: 'Sub', parentId: inner.id });
      const live = ok(await H().post('/documents', { title: 'Live', projectId: p.id, folderId: inner.id }), 201);
      const trashed = ok(await H().post('/documents', { title: 'Trashed', projectId: p.id, folderId: inner.id }), 201);
      ok(await H().del(`/documents/${trashed.id}`), 204);
      const { result, events } = await during(H(), () => H().del(`/document-folders/${inner.id}`));
      ok(result, 204);
      problem(await H().get(`/document-folders/${inner.id}`), 404, 'resource_not_found');
      expect(ok(await H().get(`/document-folders/${sub.id}`)).parentId).toBe(outer.id);
      expect(ok(await H().get(`/documents/${live.id}`)).folderId).toBe(outer.id);
      expect(ok(await H().post(`/documents/${trashed.id}/restore`)).folderId).toBe(outer.id);
      expect(ofType(events, 'document.updated').map((e) => e.aggregateId).sort()).toEqual([live.id, trashed.id].sort());
      expect(events.filter((e) => e.type.startsWith('documentFolder.'))).toEqual([]);
      const made = await during(H(), () => folder({ name: 'Quiet' }));
      expect(made.events).toEqual([]);
    });

    it('purging a project destroys its documents and folders (document.force_deleted each, task attachments across projects dropped at either end; docs/not-shown.md "Purging a project")', async () => {
      const gone = await H().project({ name: 'Doomed docs' });
      const kept = await H().project({ name: 'Kept docs' });
      const f = ok(await H().post('/document-folders', { name: 'F', projectId: gone.id }), 201);
      const d = ok(await H().post('/documents', { title: 'D', projectId: gone.id, folderId: f.id }), 201);
      const trashedDoc = ok(await H().post('/documents', { title: 'Trashed D', projectId: gone.id }), 201);
      ok(await H().del(`/documents/${trashedDoc.id}`), 204);
      // A document of the kept project attached to a task of the doomed one, and the other way round.
      const keptDoc = ok(await H().post('/documents', { title: 'Kept D', projectId: kept.id }), 201);
      const doomedTask = await H().task(gone.id, { name: 'Doomed task' });
      const keptTask = await H().task(kept.id, { name: 'Kept task' });
      ok(await H().post(`/tasks/${doomedTask.id}/attach-document`, { documentId: keptDoc.id }));
      ok(await H().post(`/tasks/${keptTask.id}/attach-document`, { documentId: d.id }));
      ok(await H().del(`/projects/${gone.id}`), 204);
      H().clock.advance(31 * 24 * 3600 * 1000);
      const { events } = await during(H(), () => H().api.jobs.purge());
      expect(ofType(events, 'document.force_deleted').map((e) => e.aggregateId).sort()).toEqual([d.id, trashedDoc.id].sort());
      expect(ofType(events, 'task.removed', doomedTask.id)).toHaveLength(1);
      expect(ok(await H().get(`/documents?taskId[eq]=${doomedTask.id}`)).data).toEqual([]);
      expect(ok(await H().get(`/documents?taskId[eq]=${keptTask.id}`)).data).toEqual([]);
      // The link rows themselves are gone, not only hidden.
      const links = await H().store.db.selectFrom('links').selectAll().where('kind', '=', 'document.tasks')
        .where((eb: any) => eb.or([eb('parent_id', 'in', [d.id, keptDoc.id]), eb('related_id', 'in', [doomedTask.id, keptTask.id])])).execute();
      expect(links).toEqual([]);
      expect(ok(await H().get(`/documents/${keptDoc.id}`)).id).toBe(keptDoc.id);
      problem(await H().get(`/documents/${d.id}`), 404, 'resource_not_found');
      expect(ok(await H().get(`/documents?purgeAt[notNull]=true&limit=200`)).data.map((x: any) => x.id)).not.toContain(d.id);
      problem(await H().get(`/document-folders/${f.id}`), 404, 'resource_not_found');
    });
  });
}
