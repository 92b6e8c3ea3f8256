import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../kit';
import { copyProjects } from './shared';
import { expectOk as ok } from './resources/helpers';

/** Project access: project_access_denied and accessible_project_ids_exceeded (spec "Errors"; rules in docs/not-shown.md). */
export function projectAccessSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Errors 403 project_access_denied: who opens which project`, () => {
    let h: Harness;
    let limited: any;
    let task: any;
    beforeAll(async () => {
      h = await harness(factory);
      limited = await h.project({ name: 'Secret' });
      task = await h.task(limited.id, { name: 'hidden task' });
    });
    afterAll(() => h.close());

    const denied = (r: { status: number; body: any }, projectId: string) => {
      expect(r.status, JSON.stringify(r.body)).toBe(403);
      expect(r.body.code).toBe('project_access_denied');
      expect(r.body.projectId).toBe(projectId);
    };

    it('a limited project is closed to a regular member who is not in it: reads, writes, rows of it', async () => {
      const token = h.a.regular.token;
      denied(await h.get(`/projects/${limited.id}`, { token }), limited.id);
      denied(await h.patch(`/projects/${limited.id}`, { description: 'x' }, { token }), limited.id);
      // A regular role cannot delete projects at all: the role check comes first.
      expect((await h.del(`/projects/${limited.id}`, { token })).body.code).toBe('permission_denied');
      denied(await h.get(`/tasks/${task.id}`, { token }), limited.id);
      denied(await h.patch(`/tasks/${task.id}`, { name: 'y' }, { token }), limited.id);
      denied(await h.del(`/tasks/${task.id}`, { token }), limited.id);
      denied(await h.post(`/tasks/${task.id}/assignees`, { ids: [h.a.regular.id] }, { token }), limited.id);
      denied(await h.get(`/tasks?projectId=${limited.id}`, { token }), limited.id);
      denied(await h.post('/tasks', { name: 'sneak', projectId: limited.id }, { token }), limited.id);
      denied(await h.post('/lists', { name: 'sneak', projectId: limited.id }, { token }), limited.id);
      const projects = await h.get('/projects', { token });
      expect(projects.body.data.map((p: any) => p.id)).not.toContain(limited.id);
      const tasks = await h.get('/tasks', { token });
      expect(tasks.body.data.map((t: any) => t.id)).not.toContain(task.id);
      const statuses = await h.get('/statuses', { token });
      expect(statuses.body.data.every((s: any) => s.projectId !== limited.id)).toBe(true);
      // Nothing changed.
      expect((await h.get(`/tasks/${task.id}`)).body.name).toBe('hidden task');
    });

    it('becoming a member opens it; leaving closes it again', async () => {
      const token = h.a.regular.token;
      expect((await h.post(`/projects/${limited.id}/members`, { ids: [h.a.regular.id] })).status).toBe(200);
      expect((await h.get(`/projects/${limited.id}`, { token })).status).toBe(200);
      expect((await h.get(`/tasks?projectId=${limited.id}`, { token })).body.data).toHaveLength(1);
      expect((await h.del(`/projects/${limited.id}/members`, { body: { ids: [h.a.regular.id] } })).status).toBe(200);
      denied(await h.get(`/projects/${limited.id}`, { token }), limited.id);
    });

    it('public and workspace projects are open to regular members, not to guests (client role) unless members', async () => {
      for (const accessType of ['workspace', 'public']) {
        const p = await h.project({ name: `Open ${accessType}`, accessType });
        expect((await h.get(`/projects/${p.id}`, { token: h.a.regular.token })).status).toBe(200);
        const byClient = await h.get(`/projects/${p.id}`, { token: h.a.client.token });
        if (accessType === 'public') {
          // public adds every member at creation, the client too.
          expect(byClient.status).toBe(200);
        } else {
          denied(byClient, p.id);
        }
      }
    });

    it('a guest who is a member reads the project and writes its tasks, within its role', async () => {
      const p = await h.project({ name: 'With guest', members: [h.a.client.id] });
      const token = h.a.client.token;
      expect((await h.get(`/projects/${p.id}`, { token })).status).toBe(200);
      const t = await h.post('/tasks', { name: 'from the client', projectId: p.id }, { token });
      expect(t.status).toBe(201);
      const patch = await h.patch(`/projects/${p.id}`, { description: 'no' }, { token });
      expect(patch.status).toBe(403);
      expect(patch.body.code).toBe('permission_denied');
      expect(patch.body.missingPermissions).toEqual(['projects:write']);
    });

    it('the owner role sees every project; a member sees the limited projects it owns', async () => {
      const mine = await h.project({ name: 'Regular owns' }, h.a.regular.token);
      expect((await h.get(`/projects/${mine.id}`, { token: h.a.regular.token })).status).toBe(200);
      expect((await h.get(`/projects/${mine.id}`)).status).toBe(200);
      const all = await h.get('/projects?limit=200');
      expect(all.body.data.map((p: any) => p.id)).toEqual(expect.arrayContaining([limited.id, mine.id]));
    });

    it('moving a task into a project the caller cannot open is refused and nothing moves', async () => {
      const open = await h.project({ name: 'Open for move', accessType: 'workspace' });
      const t = await h.task(open.id, {}, h.a.regular.token);
      denied(await h.patch(`/tasks/${t.id}`, { projectId: limited.id }, { token: h.a.regular.token }), limited.id);
      expect((await h.get(`/tasks/${t.id}`)).body.projectId).toBe(open.id);
    });

    it('a body\'s references are checked in the body\'s order, each fully (found, then opened) before the next: the first failing one is the answer', async () => {
      // The rows are read in one round trip on Postgres (services/references.ts); the answer must still be the
      // one a check after check gives: a status of a closed project before a missing list is 403, after it 404.
      const open = await h.project({ name: 'Open for references', accessType: 'workspace' });
      const closedStatus = ok(await h.get(`/statuses?projectId=${limited.id}&limit=1`)).data[0];
      const missing = 'nolist000000000000000000';
      const token = h.a.regular.token;
      const before = ok(await h.get(`/tasks?projectId=${open.id}&limit=200`)).data.length;
      denied(await h.post('/tasks', { name: 'refs', projectId: open.id, statusId: closedStatus.id, listId: missing }, { token }), limited.id);
      const listFirst = await h.post('/tasks', { name: 'refs', projectId: open.id, listId: missing, statusId: closedStatus.id }, { token });
      expect(listFirst.status, JSON.stringify(listFirst.body)).toBe(404);
      expect(listFirst.body).toMatchObject({ code: 'resource_not_found', field: 'listId' });
      // The owner opens both projects: the status is found and opened, so the missing list is the answer either way.
      const byOwner = await h.post('/tasks', { name: 'refs', projectId: open.id, statusId: closedStatus.id, listId: missing });
      expect(byOwner.status).toBe(404);
      expect(byOwner.body).toMatchObject({ code: 'resource_not_found', field: 'listId' });
      expect(ok(await h.get(`/tasks?projectId=${open.id}&limit=200`)).data).toHaveLength(before);
    });
  });

  describe(`[${factory.name}] v3 Errors 400 accessible_project_ids_exceeded (Limits: 1000 projects for workspace-wide lists)`, () => {
    let h: Harness;
    let some: any;
    beforeAll(async () => {
      h = await harness(factory);
      some = await h.project({ name: 'Template', accessType: 'workspace' });
      // 1000 more open projects.
      await copyProjects(h, some.id, 1000, 'bulk');
    });
    afterAll(() => h.close());

    it('a workspace-wide list by a caller who can open 1001 projects is refused', async () => {
      for (const token of [h.a.regular.token, h.a.owner.token]) {
        const r = await h.get('/tasks', { token });
        expect(r.status).toBe(400);
        expect(r.body.code).toBe('accessible_project_ids_exceeded');
        expect(r.body.max).toBe(1000);
      }
    });

    it('restricting the list to one project works, and a guest with few projects is not affected', async () => {
      expect((await h.get(`/tasks?projectId=${some.id}`, { token: h.a.regular.token })).status).toBe(200);
      expect((await h.get('/tasks', { token: h.a.client.token })).status).toBe(200);
    });

    it('at exactly 1000 the list works', async () => {
      await h.del('/projects/bulk000999');
      expect((await h.get('/tasks', { token: h.a.regular.token })).status).toBe(200);
    });
  });
}
