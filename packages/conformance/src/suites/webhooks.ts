import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { eventCatalog, verifyWebhookSignature, type WebhookAttempt, type WebhookRequest } from '@pmapi/core';
import { harness, type Harness, type StoreFactory } from '../kit';

const SECRET = /^whsec_[0-9A-Za-z]{32}$/;

async function makeHook(h: Harness, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  const r = await h.post('/webhooks', { url: 'https://hooks.example.com/in', ...body }, { token });
  if (r.status !== 201) throw new Error(`webhook create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function dbRow(h: Harness, id: string): Promise<Record<string, any>> {
  return h.api.store.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function jobs(h: Harness): Promise<Array<Record<string, any>>> {
  return h.api.store.db.selectFrom('webhook_jobs').selectAll().execute();
}

export function webhooksSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Events: the event catalog (Event names)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('holds the stated counts: 155 lifecycle, 38 membership, 11+ operation (all 13 listed)', () => {
      const c = eventCatalog(h.api.registry);
      expect(c.lifecycle).toHaveLength(155);
      expect(new Set(c.lifecycle).size).toBe(155);
      expect(c.membership).toHaveLength(38);
      expect(c.operation.length).toBeGreaterThanOrEqual(11);
      for (const op of ['document.append', 'document.editText', 'file.createFromContent', 'file.createUploadUrl', 'file.uploadFromUrl',
        'project.addMember', 'project.removeMember', 'project.transfer', 'task.attachDocument', 'task.createTree', 'task.detachDocument',
        'webhook.rotateSecret', 'webhook.test']) expect(c.has(op), op).toBe(true);
      expect(c.has('task.assignees.added')).toBe(true);
      expect(c.has('project.members.removed')).toBe(true);
      expect(c.has('task.nope')).toBe(false);
    });

    it('every declared resource with writes and events is a lifecycle resource, and every declared relation has its pair; a quiet one is in no name', () => {
      const c = eventCatalog(h.api.registry);
      for (const res of h.api.registry.all()) {
        if (!res.events) {
          // Personal access tokens emit nothing (not in the spec's catalog).
          expect(c.all.filter((n) => n.startsWith(`${res.name}.`)), res.name).toEqual([]);
          continue;
        }
        if (res.operations.create || res.operations.update || res.operations.delete) {
          for (const a of ['created', 'updated', 'removed', 'restored', 'force_deleted']) expect(c.has(`${res.name}.${a}`), `${res.name}.${a}`).toBe(true);
        }
        for (const rel of Object.keys(res.relations ?? {})) {
          expect(c.has(`${res.name}.${rel}.added`), `${res.name}.${rel}`).toBe(true);
          expect(c.has(`${res.name}.${rel}.removed`), `${res.name}.${rel}`).toBe(true);
        }
      }
    });

    it('every event the engine emitted for a run of writes is a catalog name', async () => {
      const c = eventCatalog(h.api.registry);
      const p = await h.project({ members: [h.a.regular.id] });
      await h.patch(`/projects/${p.id}`, { members: [h.a.owner.id] });
      const label = (await h.post('/labels', { name: 'L1' })).body;
      const t = await h.task(p.id, { assignees: [h.a.owner.id], labels: [label.id] });
      await h.patch(`/tasks/${t.id}`, { name: 'renamed', assignees: [] });
      await h.post(`/tasks/${t.id}/subscribers`, { ids: [h.a.owner.id] });
      await h.del(`/tasks/${t.id}`);
      const pf = (await h.post('/portfolios', { name: 'PF', members: [h.a.owner.id] })).body;
      await h.del(`/portfolios/${pf.id}`);
      await h.post(`/portfolios/${pf.id}/restore`);
      const w = await makeHook(h);
      await h.patch(`/webhooks/${w.id}`, { name: 'x' });
      await h.post(`/webhooks/${w.id}/rotate-secret`);
      await h.del(`/webhooks/${w.id}`);
      h.clock.advance(31 * 24 * 3600 * 1000);
      await h.api.jobs.purge();
      const types = new Set((await h.outbox()).map((e) => e.type as string));
      for (const t of ['project.members.added', 'project.members.removed', 'task.assignees.removed', 'webhook.rotateSecret', 'webhook.force_deleted']) {
        expect(types.has(t), t).toBe(true);
      }
      for (const t of types) expect(c.has(t), t).toBe(true);
    });

    it('every event documents, chats, messages, files and annotations emit (lifecycle, membership, operation) is a catalog name (issue 12)', async () => {
      // A harness of its own: this test moves the clock past the retention.
      const h = await harness(factory);
      try {
        const c = eventCatalog(h.api.registry);
        const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
        const p = await h.project({ members: [h.a.regular.id] });
        const t = await h.task(p.id);
        const doc = (await h.post('/documents', { title: 'D', projectId: p.id, body: 'x' })).body;
        await h.post(`/documents/${doc.id}/append`, { text: 'y' });
        await h.post(`/documents/${doc.id}/edit-text`, { oldText: 'y', newText: 'z' });
        await h.post(`/tasks/${t.id}/attach-document`, { documentId: doc.id });
        await h.post(`/tasks/${t.id}/detach-document`, { documentId: doc.id });
        const chat = (await h.post('/chats', { name: 'C', memberIds: [h.a.regular.id] })).body;
        await h.patch(`/chats/${chat.id}`, { description: 'about' });
        const file = (await h.upload('bytes', { name: 'a.txt', projectId: p.id })).body;
        const label = (await h.post('/labels', { name: 'Files label' })).body;
        await h.post(`/files/${file.id}/labels`, { ids: [label.id] });
        await h.del(`/files/${file.id}/labels`, { body: { ids: [label.id] } });
        await h.post(`/files/${file.id}/subscribers`, { ids: [h.a.regular.id] });
        await h.post('/files/from-content', { name: 'b.txt', content: 'hi', projectId: p.id });
        const note = (await h.post('/annotations', { type: 'image', fileId: file.id, position: { shape: 'POINT', x: 1, y: 2 } })).body;
        const m = (await h.post('/messages', { chatId: chat.id, text: 'hello', files: [file.id] })).body;
        await h.patch(`/messages/${m.id}`, { text: 'hello again', files: [] });
        await h.post('/messages', { annotationId: note.id, text: 'first comment' });
        await h.post('/messages', { recipientMemberId: h.a.regular.id, text: 'direct' });
        await h.del(`/messages/${m.id}`);
        await h.post(`/messages/${m.id}/restore`);
        await h.del(`/files/${file.id}/subscribers`, { body: { ids: [h.a.regular.id] } });
        await h.del(`/annotations/${note.id}`);
        await h.patch(`/documents/${doc.id}`, { title: 'D2' });
        await h.del(`/documents/${doc.id}`);
        await h.post(`/documents/${doc.id}/restore`);
        await h.del(`/files/${file.id}`);
        await h.post(`/files/${file.id}/restore`);
        await h.del(`/files/${file.id}`);
        await h.del(`/documents/${doc.id}`);
        const doomed = (await h.post('/messages', { taskId: t.id, text: 'to be purged' })).body;
        await h.del(`/messages/${doomed.id}`);
        await h.del(`/chats/${chat.id}`);
        await h.api.jobs.processFiles();
        // Past the retention (30 days), the trashed document, file and message are purged.
        h.clock.advance(31 * 24 * 3600 * 1000);
        await h.api.jobs.purge();
        const events = (await h.outbox()).filter((e) => !seen.has(e.eventId));
        const types = new Set(events.map((e) => e.type as string));
        for (const name of [
          'document.created', 'document.updated', 'document.removed', 'document.restored', 'document.force_deleted',
          'document.append', 'document.editText', 'task.attachDocument', 'task.detachDocument',
          'chat.created', 'chat.updated', 'chat.removed', 'file.createUploadUrl', 'file.created', 'file.createFromContent', 'file.updated', 'file.removed',
          'file.restored', 'file.force_deleted', 'file.labels.added', 'file.labels.removed', 'file.subscribers.added', 'file.subscribers.removed',
          'annotation.created', 'annotation.updated', 'annotation.removed',
          'message.created', 'message.updated', 'message.removed', 'message.restored', 'message.force_deleted', 'message.files.added', 'message.files.removed',
        ]) expect(types.has(name), name).toBe(true);
        // The annotation's first comment made its thread task: task.created for it.
        expect(events.some((e) => e.type === 'task.created' && String(e.payload.task.name).startsWith('Annotations: a.txt'))).toBe(true);
        for (const name of types) expect(c.has(name), name).toBe(true);
      } finally {
        await h.close();
      }
    });

    it('the project and task operations and the task relations emit their catalog events: project.addMember, project.removeMember, project.transfer, task.createTree, task.connectedTasks.*, task.hiddenFor.* (issue 14 part d)', async () => {
      const c = eventCatalog(h.api.registry);
      const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
      const p = await h.project({ name: 'Operations catalog' });
      await h.post(`/projects/${p.id}/add-member`, { memberId: h.a.regular.id });
      await h.post(`/projects/${p.id}/remove-member`, { memberId: h.a.regular.id });
      await h.post(`/projects/${p.id}/transfer`, { ownerId: h.a.regular.id });
      const tree = (await h.post('/tasks/tree', { name: 'Root', projectId: p.id, subtasks: [{ name: 'Child' }] })).body;
      const [child] = tree.subtasks;
      await h.post(`/tasks/${tree.id}/connected-tasks`, { ids: [child.id] });
      await h.del(`/tasks/${tree.id}/connected-tasks`, { body: { ids: [child.id] } });
      await h.post(`/tasks/${tree.id}/hidden-for`, { ids: [h.a.roleIds.client] });
      await h.patch(`/tasks/${tree.id}`, { hiddenFor: [] });
      const events = (await h.outbox()).filter((e) => !seen.has(e.eventId));
      const types = new Set(events.map((e) => e.type as string));
      for (const name of [
        'project.addMember', 'project.removeMember', 'project.transfer', 'project.members.added', 'project.members.removed', 'task.createTree', 'task.created',
        'task.connectedTasks.added', 'task.connectedTasks.removed', 'task.hiddenFor.added', 'task.hiddenFor.removed',
      ]) {
        expect(types.has(name), name).toBe(true);
        expect(c.has(name), name).toBe(true);
      }
      for (const name of types) expect(c.has(name), name).toBe(true);
      // Operation events carry the operation's answer under the resource key.
      // (nested nodes without description: docs/not-shown.md "Task operations")
      const { description: _d, ...childEvent } = child;
      expect(events.find((e) => e.type === 'task.createTree').payload.task).toEqual({ ...tree, subtasks: [childEvent] });
      expect(events.find((e) => e.type === 'project.transfer').payload.project.ownerId).toBe(h.a.regular.id);
    });

    it('member emits all five lifecycle events, each a catalog name: admin add (created), PATCH (updated), DELETE (removed), restore (restored), purge (force_deleted) (issue 14)', async () => {
      // A harness of its own: this test moves the clock past the retention.
      const h = await harness(factory);
      try {
        const c = eventCatalog(h.api.registry);
        const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
        const m = await h.api.admin.addMember(h.a.id, { name: 'Lifecycle Member' });
        await h.patch(`/members/${m.id}`, { role: 'client' });
        await h.del(`/members/${m.id}`);
        await h.post(`/members/${m.id}/restore`);
        await h.del(`/members/${m.id}`);
        h.clock.advance(31 * 24 * 3600 * 1000);
        await h.api.jobs.purge();
        const events = (await h.outbox()).filter((e) => !seen.has(e.eventId) && e.aggregateId === m.id);
        const types = events.map((e) => e.type as string);
        for (const action of ['created', 'updated', 'removed', 'restored', 'force_deleted']) {
          expect(types, `member.${action}`).toContain(`member.${action}`);
          expect(c.has(`member.${action}`), `member.${action}`).toBe(true);
        }
        for (const e of events) expect(e.payload.member.id).toBe(m.id);
      } finally {
        await h.close();
      }
    });

    it('every event recurring rules and the recurring-task job emit (lifecycle of recurringRule, the tasks it creates, rule deletion) is a catalog name (issue 13)', async () => {
      const c = eventCatalog(h.api.registry);
      const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
      const p = await h.project();
      const rule = (await h.post('/recurring-rules', { name: 'Every day', projectId: p.id, frequency: 'daily' })).body;
      await h.patch(`/recurring-rules/${rule.id}`, { timeOfDay: '07:30' });
      const due = (await h.get(`/recurring-rules/${rule.id}`)).body.nextRunAt as string;
      h.clock.set(Math.max(h.clock.now(), Date.parse(due)));
      await h.api.jobs.recurring();
      const list = (await h.post('/lists', { name: 'Made by rule', projectId: p.id, recurringRuleId: rule.id })).body;
      await h.del(`/recurring-rules/${rule.id}`);
      const events = (await h.outbox()).filter((e) => !seen.has(e.eventId));
      const types = new Set(events.map((e) => e.type as string));
      for (const name of ['recurringRule.created', 'recurringRule.updated', 'recurringRule.removed', 'task.created', 'task.updated', 'list.updated']) {
        expect(types.has(name), name).toBe(true);
      }
      expect(events.some((e) => e.type === 'list.updated' && e.aggregateId === list.id)).toBe(true);
      for (const name of types) expect(c.has(name), name).toBe(true);
    });

    it('every event goals, goal groups, time entries and list goals emit (lifecycle, membership) is a catalog name (issue 13)', async () => {
      const c = eventCatalog(h.api.registry);
      const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
      const p = await h.project();
      const t = await h.task(p.id);
      const group = (await h.post('/goal-groups', { name: 'GG' })).body;
      await h.patch(`/goal-groups/${group.id}`, { name: 'GG2' });
      const g1 = (await h.post('/goals', { name: 'G1', groupId: group.id })).body;
      const g2 = (await h.post('/goals', { name: 'G2' })).body;
      await h.patch(`/goals/${g2.id}`, { currentValue: 5 });
      const list = (await h.post('/lists', { name: 'L', projectId: p.id, goals: [g1.id] })).body;
      await h.patch(`/lists/${list.id}`, { goals: [g2.id] });
      await h.post(`/lists/${list.id}/goals`, { ids: [g1.id] });
      await h.del(`/lists/${list.id}/goals`, { body: { ids: [g1.id] } });
      await h.del(`/goal-groups/${group.id}`);
      await h.del(`/goals/${g1.id}`);
      const e = (await h.post('/time-entries', { taskId: t.id, startAt: '2026-02-01T09:00:00.000Z', endAt: '2026-02-01T10:00:00.000Z' })).body;
      await h.patch(`/time-entries/${e.id}`, { billable: true });
      await h.del(`/time-entries/${e.id}`);
      const types = new Set((await h.outbox()).filter((x) => !seen.has(x.eventId)).map((x) => x.type as string));
      for (const name of [
        'goalGroup.created', 'goalGroup.updated', 'goalGroup.removed', 'goal.created', 'goal.updated', 'goal.removed',
        'list.goals.added', 'list.goals.removed', 'timeEntry.created', 'timeEntry.updated', 'timeEntry.removed',
      ]) expect(types.has(name), name).toBe(true);
      for (const name of types) expect(c.has(name), name).toBe(true);
    });

    it('every event reminders emit (API writes, the reminders job creating, firing and removing, a task delete) is a catalog name (spec "Reminder")', async () => {
      const c = eventCatalog(h.api.registry);
      const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
      const p = await h.project({ members: [h.a.regular.id] });
      const t = await h.task(p.id);
      const r = (await h.post('/reminders', { taskId: t.id, date: new Date(h.clock.now() + 10 * 60_000).toISOString() })).body;
      await h.patch(`/reminders/${r.id}`, { date: new Date(h.clock.now() + 20 * 60_000).toISOString() });
      const late = await h.task(p.id, { dueAt: new Date(h.clock.now() + 60_000).toISOString(), assignees: [h.a.regular.id] });
      h.clock.advance(30 * 60_000);
      await h.api.jobs.reminders();
      await h.patch(`/tasks/${late.id}`, { completed: true });
      await h.api.jobs.reminders();
      await h.del(`/reminders/${r.id}`);
      const gone = (await h.post('/reminders', { taskId: t.id, date: new Date(h.clock.now() + 10 * 60_000).toISOString() })).body;
      await h.del(`/tasks/${t.id}`);
      const events = (await h.outbox()).filter((e) => !seen.has(e.eventId));
      const types = new Set(events.map((e) => e.type as string));
      for (const name of ['reminder.created', 'reminder.updated', 'reminder.removed']) expect(types.has(name), name).toBe(true);
      expect(events.some((e) => e.type === 'reminder.removed' && e.aggregateId === gone.id)).toBe(true);
      for (const name of types) expect(c.has(name), name).toBe(true);
    });

    it('every event check-ins, check-in requests, report charts, status relations and autoMilestones emit (lifecycle, membership) is a catalog name (issue 13)', async () => {
      const c = eventCatalog(h.api.registry);
      const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
      const p = (await h.post('/projects', { name: 'Issue 13 events', members: [h.a.regular.id], autoMilestones: true })).body;
      const req = (await h.post('/check-in-requests', { question: 'Q?', projectId: p.id, startAt: new Date(h.clock.now() + 60_000).toISOString(), assignees: [h.a.regular.id] })).body;
      await h.post(`/check-in-requests/${req.id}/assignees`, { ids: [h.a.owner.id] });
      await h.del(`/check-in-requests/${req.id}/assignees`, { body: { ids: [h.a.regular.id] } });
      await h.patch(`/check-in-requests/${req.id}`, { paused: true });
      const ci = (await h.post('/check-ins', { text: 'Done', projectId: p.id, checkInRequestId: req.id, assignees: [h.a.regular.id], subscribers: [h.a.owner.id] })).body;
      await h.patch(`/check-ins/${ci.id}`, { assignees: [], health: 'atRisk' });
      await h.del(`/check-ins/${ci.id}/subscribers`, { body: { ids: [h.a.owner.id] } });
      await h.del(`/check-in-requests/${req.id}`);
      await h.del(`/check-ins/${ci.id}`);
      const chart = (await h.post('/report-charts', { name: 'Burn', type: 'burnup', projects: [p.id] })).body;
      await h.patch(`/report-charts/${chart.id}`, { projects: [] });
      await h.post(`/report-charts/${chart.id}/projects`, { ids: [p.id] });
      await h.del(`/report-charts/${chart.id}`);
      const st = (await h.post('/statuses', { name: 'Col', projectId: p.id, assignees: [h.a.regular.id], hiddenFor: [h.a.roleIds.client] })).body;
      await h.del(`/statuses/${st.id}/assignees`, { body: { ids: [h.a.regular.id] } });
      await h.post(`/statuses/${st.id}/hidden-for/remove`, { ids: [h.a.roleIds.client] });
      const types = new Set((await h.outbox()).filter((e) => !seen.has(e.eventId)).map((e) => e.type as string));
      for (const name of [
        'list.created', 'checkInRequest.created', 'checkInRequest.updated', 'checkInRequest.removed', 'checkInRequest.assignees.added', 'checkInRequest.assignees.removed',
        'checkIn.created', 'checkIn.updated', 'checkIn.removed', 'checkIn.assignees.added', 'checkIn.assignees.removed', 'checkIn.subscribers.added', 'checkIn.subscribers.removed',
        'reportChart.created', 'reportChart.updated', 'reportChart.removed', 'reportChart.projects.added', 'reportChart.projects.removed',
        'status.assignees.added', 'status.assignees.removed', 'status.hiddenFor.added', 'status.hiddenFor.removed',
      ]) expect(types.has(name), name).toBe(true);
      for (const name of types) expect(c.has(name), name).toBe(true);
    });

    it('every event forms emit (created, updated, removed, restored, force_deleted; form.updated from a deleted target list) is a catalog name (spec "Form")', async () => {
      const c = eventCatalog(h.api.registry);
      const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
      const p = await h.project({ name: 'Form events' });
      const statusId = (await h.get(`/projects/${p.id}`)).body.defaultStatusId;
      const list = (await h.post('/lists', { name: 'Form intake', projectId: p.id })).body;
      const f = (await h.post('/forms', { meta: { title: 'Events form' }, fields: [{ type: 'shortText', title: 'Name' }], projectId: p.id, automation: 'task', targetStatusId: statusId, targetListId: list.id })).body;
      await h.patch(`/forms/${f.id}`, { isShared: true });
      await h.del(`/lists/${list.id}`);
      await h.del(`/forms/${f.id}`);
      await h.post(`/forms/${f.id}/restore`);
      await h.del(`/forms/${f.id}`);
      h.clock.advance(31 * 24 * 3600 * 1000);
      await h.api.jobs.purge();
      const events = (await h.outbox()).filter((e) => !seen.has(e.eventId) && e.aggregateId === f.id);
      const types = events.map((e) => e.type as string);
      expect(types.filter((t) => t === 'form.updated')).toHaveLength(2);
      for (const name of ['form.created', 'form.removed', 'form.restored', 'form.force_deleted']) expect(types.filter((t) => t === name), name).toHaveLength(name === 'form.removed' ? 2 : 1);
      for (const name of types) expect(c.has(name), name).toBe(true);
      expect(c.lifecycle.filter((n) => n.startsWith('form.')).sort()).toEqual(['form.created', 'form.force_deleted', 'form.removed', 'form.restored', 'form.updated']);
    });

    it('every event favorites and favorite folders emit (API writes, a folder delete unfiling, a target deleted for good) is a catalog name (issue 14)', async () => {
      const c = eventCatalog(h.api.registry);
      const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
      const p = await h.project({ name: 'Favorite events' });
      const t = await h.task(p.id);
      const folder = (await h.post('/favorite-folders', { name: 'Sidebar' })).body;
      await h.patch(`/favorite-folders/${folder.id}`, { name: 'Sidebar 2' });
      const onProject = (await h.post('/favorites', { targetType: 'project', targetId: p.id, favoriteFolderId: folder.id })).body;
      const onTask = (await h.post('/favorites', { targetType: 'task', targetId: t.id })).body;
      await h.patch(`/favorites/${onTask.id}`, { order: 3 });
      await h.del(`/favorite-folders/${folder.id}`);
      await h.del(`/tasks/${t.id}`);
      await h.del(`/favorites/${onProject.id}`);
      const events = (await h.outbox()).filter((e) => !seen.has(e.eventId));
      const types = new Set(events.map((e) => e.type as string));
      for (const name of ['favoriteFolder.created', 'favoriteFolder.updated', 'favoriteFolder.removed', 'favorite.created', 'favorite.updated', 'favorite.removed']) {
        expect(types.has(name), name).toBe(true);
      }
      // The folder delete unfiled the project's favorite (favorite.updated); the task delete removed the task's (favorite.removed).
      expect(events.some((e) => e.type === 'favorite.updated' && e.aggregateId === onProject.id && e.payload.favorite.favoriteFolderId === null)).toBe(true);
      expect(events.filter((e) => e.type === 'favorite.removed').map((e) => e.aggregateId).sort()).toEqual([onProject.id, onTask.id].sort());
      for (const name of types) expect(c.has(name), name).toBe(true);
      for (const r of ['favorite', 'favoriteFolder']) {
        expect(c.lifecycle.filter((n) => n.startsWith(`${r}.`)).sort()).toEqual(['created', 'force_deleted', 'removed', 'restored', 'updated'].map((a) => `${r}.${a}`));
      }
    });

    it('every event project folders, task handoffs and presence statuses emit (API writes, a folder delete unfiling, a handoff accepted, a task delete) is a catalog name (issue 14 part b)', async () => {
      const c = eventCatalog(h.api.registry);
      const seen = new Set((await h.outbox()).map((e) => e.eventId as string));
      const folder = (await h.post('/project-folders', { name: 'Catalog folder' })).body;
      await h.patch(`/project-folders/${folder.id}`, { name: 'Catalog folder 2' });
      const p = await h.project({ name: 'Handoff events', projectFolderId: folder.id, members: [h.a.owner.id, h.a.regular.id] });
      await h.del(`/project-folders/${folder.id}`);
      const t = await h.task(p.id, { assignees: [h.a.owner.id] });
      const handoff = (await h.post('/task-handoffs', { taskId: t.id, toMemberId: h.a.regular.id, note: 'yours' })).body;
      await h.patch(`/task-handoffs/${handoff.id}`, { status: 'accepted' }, { token: h.a.regular.token });
      const other = await h.task(p.id);
      const doomed = (await h.post('/task-handoffs', { taskId: other.id, toMemberId: h.a.regular.id })).body;
      await h.del(`/tasks/${other.id}`);
      const status = (await h.post('/presence-statuses', { text: 'Catalog' }, { token: h.a.regular.token })).body;
      await h.patch(`/presence-statuses/${status.id}`, { availability: 'busy' }, { token: h.a.regular.token });
      await h.del(`/presence-statuses/${status.id}`, { token: h.a.regular.token });
      const events = (await h.outbox()).filter((e) => !seen.has(e.eventId));
      const types = new Set(events.map((e) => e.type as string));
      for (const name of [
        'projectFolder.created', 'projectFolder.updated', 'projectFolder.removed', 'taskHandoff.created', 'taskHandoff.updated', 'taskHandoff.removed',
        'presenceStatus.created', 'presenceStatus.updated', 'presenceStatus.removed', 'task.assignees.added', 'task.assignees.removed',
      ]) expect(types.has(name), name).toBe(true);
      // The folder delete unfiled the project (project.updated); the task delete removed its handoff.
      expect(events.some((e) => e.type === 'project.updated' && e.aggregateId === p.id && e.payload.project.projectFolderId === null)).toBe(true);
      expect(events.some((e) => e.type === 'taskHandoff.removed' && e.aggregateId === doomed.id)).toBe(true);
      for (const name of types) expect(c.has(name), name).toBe(true);
      for (const r of ['projectFolder', 'taskHandoff', 'presenceStatus']) {
        expect(c.lifecycle.filter((n) => n.startsWith(`${r}.`)).sort()).toEqual(['created', 'force_deleted', 'removed', 'restored', 'updated'].map((a) => `${r}.${a}`));
      }
    });
  });

  describe(`[${factory.name}] v3 Webhook: registration validation (Webhook, Subscribing, Limits)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    const refused = async (body: Record<string, unknown>, field: string) => {
      const r = await h.post('/webhooks', { url: 'https://hooks.example.com/in', ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors.map((e: { field: string }) => e.field), JSON.stringify(body)).toContain(field);
    };

    it('create fills the defaults and the server-set fields', async () => {
      const w = await makeHook(h);
      expect(w).toMatchObject({ events: [], apiVersion: 'latest', active: true, failCount: 0, lastDeliveredAt: null, createdById: h.a.owner.id, purgeAt: null });
      expect(w.url).toBe('https://hooks.example.com/in');
      const set = await makeHook(h, { name: 'n', events: ['task.created'], apiVersion: '2026-03-20', active: false, failCount: 5, secret: 'mine' });
      expect(set).toMatchObject({ name: 'n', events: ['task.created'], apiVersion: '2026-03-20', active: false, failCount: 0 });
      expect(set.secret).toMatch(SECRET);
    });

    it('url: required, https only, at most 2048 characters', async () => {
      const r = await h.post('/webhooks', { name: 'no url' });
      expect(r.status).toBe(400);
      expect(r.body.errors.map((e: { field: string }) => e.field)).toContain('url');
      await refused({ url: 'http://hooks.example.com/in' }, 'url');
      await refused({ url: 'ftp://hooks.example.com/in' }, 'url');
      await refused({ url: 'not a url' }, 'url');
      await refused({ url: `https://hooks.example.com/${'a'.repeat(2049 - 'https://hooks.example.com/'.length)}` }, 'url');
      await makeHook(h, { url: `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}` });
    });

    it('url: private, loopback, link-local, unique-local, CGNAT and IPv4-mapped IP literals are refused, in any spelling', async () => {
      for (const url of [
        'https://127.0.0.1/', 'https://127.1.2.3:8443/x', 'https://10.0.0.1/', 'https://172.16.5.4/', 'https://192.168.1.1/', 'https://169.254.169.254/latest',
        'https://100.64.0.1/', 'https://0.0.0.0/', 'https://[::1]/', 'https://[::]/', 'https://[fe80::1]/', 'https://[fc00::1]/', 'https://[fd12:3456::1]/',
        'https://[::ffff:127.0.0.1]/', 'https://[::ffff:10.0.0.1]/', 'https://2130706433/', 'https://0x7f.0.0.1/', 'https://0177.0.0.1/', 'https://017700000001/',
        'https://[64:ff9b::7f00:1]/', 'https://224.0.0.1/',
        // IPv4-compatible, 6to4 and Teredo forms (the delivery check once took ::7f00:1 for public).
        'https://[::7f00:1]/', 'https://[::a9fe:a9fe]/', 'https://[::127.0.0.1]/', 'https://[2002:7f00:1::]/', 'https://[2002:a9fe:a9fe::1]/',
        'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'https://[64:ff9b::a9fe:a9fe]/',
      ]) await refused({ url }, 'url');
      // Public literals and names pass (names are resolved and checked at delivery).
      await makeHook(h, { url: 'https://93.184.216.34/hook' });
      await makeHook(h, { url: 'https://[2606:4700:4700::1111]/hook' });
      await makeHook(h, { url: 'https://172.32.0.1/hook' });
    });

    it('an update is checked the same way', async () => {
      const w = await makeHook(h);
      const r = await h.patch(`/webhooks/${w.id}`, { url: 'https://[::ffff:7f00:1]/' });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      const e = await h.patch(`/webhooks/${w.id}`, { events: ['task.nope'] });
      expect(e.status).toBe(400);
      expect(e.body.errors[0].field).toBe('events.0');
      expect((await h.patch(`/webhooks/${w.id}`, { events: ['task.*'] })).body.events).toEqual(['task.*']);
    });

    it('name at most 255 characters; apiVersion latest or 2026-03-20; active boolean', async () => {
      await makeHook(h, { name: 'n'.repeat(255) });
      await refused({ name: 'n'.repeat(256) }, 'name');
      await refused({ apiVersion: '2025-01-01' }, 'apiVersion');
      await refused({ active: 'yes' }, 'active');
    });

    it('events: at most 100 entries of at most 128 characters, at most 4 wildcards, no comma', async () => {
      await makeHook(h, { events: Array(100).fill('task.created') });
      await refused({ events: Array(101).fill('task.created') }, 'events');
      await refused({ events: ['task.created', `${'x'.repeat(125)}.*`] }, 'events.1');
      await refused({ events: ['*.*.*.*.*'] }, 'events.0');
      await refused({ events: ['task.created,task.updated'] }, 'events.0');
      await refused({ events: 'task.created' }, 'events');
    });

    it('events: each entry an exact catalog name or a wildcard matching at least one', async () => {
      for (const ok of ['task.created', 'task.*', 'task.*.*', '*', '*.created', '*.*.added', 'webhook.rotateSecret', 'project.members.added']) {
        await makeHook(h, { events: [ok] });
      }
      await refused({ events: ['task.nope'] }, 'events.0');
      await refused({ events: ['task.created', 'nope.*'] }, 'events.1');
      await refused({ events: ['*.*.*.*'] }, 'events.0');
      await refused({ events: ['task.creat*'] }, 'events.0');
      await refused({ events: [''] }, 'events.0');
    });
  });

  describe(`[${factory.name}] v3 Delivery semantics rule 8: the secret is returned once`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('create returns it; get, list, update and the events never do', async () => {
      const w = await makeHook(h, { events: ['*'] });
      expect(w.secret).toMatch(SECRET);
      expect((await dbRow(h, w.id)).secret).toBe(w.secret);
      const g = await h.get(`/webhooks/${w.id}`);
      expect(g.status).toBe(200);
      expect(g.body).not.toHaveProperty('secret');
      const l = await h.get('/webhooks');
      expect(l.body.data.find((x: any) => x.id === w.id)).not.toHaveProperty('secret');
      const u = await h.patch(`/webhooks/${w.id}`, { name: 'renamed' });
      expect(u.status).toBe(200);
      expect(u.body).not.toHaveProperty('secret');
      expect((await h.get(`/webhooks/${w.id}?fields[webhooks]=id,secret`)).status).toBe(400);
      await h.del(`/webhooks/${w.id}`);
      await h.post(`/webhooks/${w.id}/restore`);
      const events = (await h.outbox()).filter((e) => e.aggregateId === w.id);
      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['webhook.created', 'webhook.updated', 'webhook.removed', 'webhook.restored']));
      for (const e of events) expect(JSON.stringify(e)).not.toContain(w.secret);
    });

    it('an Idempotency-Key replay of create returns the webhook without the secret', async () => {
      const headers = { 'idempotency-key': 'wh-create-1' };
      const body = { url: 'https://hooks.example.com/idem', name: 'idem' };
      const first = await h.post('/webhooks', body, { headers });
      expect(first.status).toBe(201);
      expect(first.body.secret).toMatch(SECRET);
      const again = await h.post('/webhooks', body, { headers });
      expect(again.status).toBe(201);
      expect(again.headers['idempotency-replayed']).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      expect(again.body).not.toHaveProperty('secret');
      const stored = await h.api.store.db.selectFrom('idempotency_keys').select('response').where('key', '=', 'wh-create-1').executeTakeFirstOrThrow();
      expect(JSON.stringify(stored.response)).not.toContain(first.body.secret);
    });

    it('rotate-secret returns a new secret once; the old one is gone at once; the event carries no secret', async () => {
      const w = await makeHook(h);
      const r = await h.post(`/webhooks/${w.id}/rotate-secret`, undefined, { headers: { 'idempotency-key': 'rot-1' } });
      expect(r.status).toBe(200);
      expect(r.body.id).toBe(w.id);
      expect(r.body.secret).toMatch(SECRET);
      expect(r.body.secret).not.toBe(w.secret);
      expect((await dbRow(h, w.id)).secret).toBe(r.body.secret);
      const replay = await h.post(`/webhooks/${w.id}/rotate-secret`, undefined, { headers: { 'idempotency-key': 'rot-1' } });
      expect(replay.status).toBe(200);
      expect(replay.body).not.toHaveProperty('secret');
      expect((await dbRow(h, w.id)).secret).toBe(r.body.secret);
      const ev = (await h.outbox()).filter((e) => e.type === 'webhook.rotateSecret' && e.aggregateId === w.id);
      expect(ev).toHaveLength(1);
      expect(ev[0].payload.webhook.id).toBe(w.id);
      expect(JSON.stringify(ev[0])).not.toContain(r.body.secret);
      expect((await h.get(`/webhooks/${w.id}`)).body).not.toHaveProperty('secret');
    });
  });

  describe(`[${factory.name}] v3 Webhook endpoints: update, re-enable, soft delete and restore`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('re-enabling (active false → true) resets failCount; other updates keep it', async () => {
      const w = await makeHook(h);
      await h.api.store.db.updateTable('webhooks').set({ active: h.api.store.dialect.encode('boolean', false) as any, fail_count: 10 }).where('id', '=', w.id).execute();
      const renamed = await h.patch(`/webhooks/${w.id}`, { name: 'still off' });
      expect(renamed.body).toMatchObject({ active: false, failCount: 10 });
      const on = await h.patch(`/webhooks/${w.id}`, { active: true });
      expect(on.body).toMatchObject({ active: true, failCount: 0 });
      await h.api.store.db.updateTable('webhooks').set({ fail_count: 3 }).where('id', '=', w.id).execute();
      const again = await h.patch(`/webhooks/${w.id}`, { active: true });
      expect(again.body).toMatchObject({ active: true, failCount: 3 });
    });

    it('restore brings back the same id and the same secret', async () => {
      const w = await makeHook(h);
      expect((await h.del(`/webhooks/${w.id}`)).status).toBe(204);
      expect((await h.get(`/webhooks/${w.id}`)).status).toBe(404);
      const trashed = await h.get(`/webhooks?purgeAt[notNull]=true`);
      expect(trashed.body.data.map((x: any) => x.id)).toContain(w.id);
      const r = await h.post(`/webhooks/${w.id}/restore`);
      expect(r.status).toBe(200);
      expect(r.body.id).toBe(w.id);
      expect(r.body).not.toHaveProperty('secret');
      expect((await dbRow(h, w.id)).secret).toBe(w.secret);
    });

    it('filters and default sort -createdAt', async () => {
      const x = await makeHook(h, { name: 'filter-alpha' });
      h.clock.advance(1000);
      const y = await makeHook(h, { name: 'filter-beta', active: false });
      const all = await h.get('/webhooks?name[startsWith]=filter-');
      expect(all.body.data.map((d: any) => d.id)).toEqual([y.id, x.id]);
      expect((await h.get('/webhooks?active[eq]=false&name[contains]=filter')).body.data.map((d: any) => d.id)).toEqual([y.id]);
      expect((await h.get('/webhooks?name[eq]=filter-alpha')).body.data.map((d: any) => d.id)).toEqual([x.id]);
    });
  });

  describe(`[${factory.name}] v3 Webhook endpoints: GET /webhooks/{id}/deliveries (delivery log page)`, () => {
    let h: Harness;
    let w: any;
    beforeAll(async () => {
      h = await harness(factory);
      w = await makeHook(h);
      const other = await makeHook(h);
      const d = h.api.store.dialect;
      const base = h.clock.now();
      const rows = [];
      for (let i = 0; i < 130; i++) {
        rows.push({
          id: `dlv${String(i).padStart(5, '0')}`, team_id: h.a.id, webhook_id: w.id, event_type: 'task.created',
          status: i % 2 ? 'failed' : 'delivered', response_status: i % 3 === 0 ? null : i % 2 ? 500 : 200, duration_ms: i,
          error: i % 2 ? 'HTTP 500' : null, created_at: d.encode('timestamp', base - (130 - i) * 1000),
        });
      }
      rows.push({ id: 'dlvother', team_id: h.a.id, webhook_id: other.id, event_type: 'x', status: 'delivered', response_status: 200, duration_ms: 1, error: null, created_at: d.encode('timestamp', base) });
      for (let i = 0; i < rows.length; i += 40) await h.api.store.db.insertInto('webhook_deliveries').values(rows.slice(i, i + 40)).execute();
    });
    afterAll(() => h.close());

    it('answers {data, limit, hasMore}, newest first, 25 by default, no cursor', async () => {
      const r = await h.get(`/webhooks/${w.id}/deliveries`);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['data', 'hasMore', 'limit']);
      expect(r.body.limit).toBe(25);
      expect(r.body.hasMore).toBe(true);
      expect(r.body.data).toHaveLength(25);
      expect(r.body.data[0].id).toBe('dlv00129');
      expect(r.body.data[1].id).toBe('dlv00128');
      expect(Object.keys(r.body.data[0]).sort()).toEqual(['createdAt', 'durationMs', 'error', 'eventType', 'id', 'responseStatus', 'status', 'webhookId']);
      expect(r.body.data[0]).toMatchObject({ webhookId: w.id, eventType: 'task.created', status: 'failed', responseStatus: null, durationMs: 129, error: 'HTTP 500' });
      expect(r.body.data[1]).toMatchObject({ status: 'delivered', responseStatus: 200, durationMs: 128, error: null });
      expect(r.body.data[0].createdAt).toBe(new Date(h.clock.now() - 1000).toISOString());
      const d3 = r.body.data.find((x: any) => x.id === 'dlv00126');
      expect(d3).toMatchObject({ status: 'delivered', responseStatus: null, error: null });
    });

    it('limit 1-100; larger is clamped to 100; below 1 or not a number is 400 invalid_query_param', async () => {
      const one = await h.get(`/webhooks/${w.id}/deliveries?limit=1`);
      expect(one.body).toMatchObject({ limit: 1, hasMore: true });
      const hundred = await h.get(`/webhooks/${w.id}/deliveries?limit=100`);
      expect(hundred.body.data).toHaveLength(100);
      const big = await h.get(`/webhooks/${w.id}/deliveries?limit=500`);
      expect(big.body.limit).toBe(100);
      expect(big.body.data).toHaveLength(100);
      const all = await h.get(`/webhooks/${w.id}/deliveries?limit=100`);
      expect(all.body.data.every((x: any) => x.webhookId === w.id)).toBe(true);
      for (const q of ['limit=0', 'limit=-1', 'limit=abc', 'limit=2.5', 'cursor=abc', 'limit=5&limit=6']) {
        const r = await h.get(`/webhooks/${w.id}/deliveries?${q}`);
        expect(r.status, q).toBe(400);
        expect(r.body.code, q).toBe('invalid_query_param');
      }
    });

    it('an unknown or trashed webhook is 404', async () => {
      expect((await h.get('/webhooks/nope0000/deliveries')).status).toBe(404);
      const t = await makeHook(h);
      await h.del(`/webhooks/${t.id}`);
      expect((await h.get(`/webhooks/${t.id}/deliveries`)).status).toBe(404);
    });
  });

  describe(`[${factory.name}] v3 Delivery semantics rule 6: POST /webhooks/{id}/test`, () => {
    let h: Harness;
    const sent: WebhookRequest[] = [];
    let answer: WebhookAttempt = { ok: true, status: 204, durationMs: 12, error: null };
    beforeAll(async () => {
      h = await harness(factory, {
        api: () => ({
          webhookSender: async (req) => {
            sent.push(req);
            return answer;
          },
        }),
      });
    });
    afterAll(() => h.close());

    it('sends one synthetic delivery with exactly the spec headers, signed with the secret at the clock', async () => {
      const w = await makeHook(h, { events: ['task.*', 'project.created'], apiVersion: '2026-03-20' });
      sent.length = 0;
      const r = await h.post(`/webhooks/${w.id}/test`);
      expect(r.status).toBe(200);
      expect(sent).toHaveLength(1);
      const req = sent[0]!;
      expect(req.url).toBe('https://hooks.example.com/in');
      const body = JSON.parse(req.body);
      expect(body.eventId).toMatch(/^test-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(Object.keys(req.headers).sort()).toEqual(['Content-Type', 'User-Agent', 'X-Api-Version', 'X-Webhook-Delivery-Id', 'X-Webhook-Event', 'X-Webhook-Id', 'X-Webhook-Signature'].sort());
      expect(req.headers).toMatchObject({
        'Content-Type': 'application/json', 'User-Agent': 'Service-Webhooks/2.0', 'X-Webhook-Id': w.id, 'X-Webhook-Event': 'task.test',
        'X-Webhook-Delivery-Id': `${w.id}:${body.eventId}`, 'X-Api-Version': '2026-03-20',
      });
      const sig = req.headers['X-Webhook-Signature']!;
      expect(sig).toMatch(new RegExp(`^t=${Math.floor(h.clock.now() / 1000)},v1=[0-9a-f]{64}$`));
      expect(verifyWebhookSignature(req.body, sig, w.secret, { now: h.clock.now() })).toBe(true);
      expect(verifyWebhookSignature(req.body, sig, w.secret, { now: h.clock.now() + 301_000 })).toBe(false);
      expect(body).toMatchObject({
        type: 'task.test', aggregateType: 'webhook', aggregateId: w.id, teamId: h.a.id, projectId: null, triggeredBy: { source: 'system' },
        timestamp: new Date(h.clock.now()).toISOString(),
      });
      expect(body.payload._test).toBe(true);
      expect(typeof body.payload.message).toBe('string');
      expect(typeof body.payload.timestamp).toBe('string');
      expect(r.body).toEqual({ delivered: true, responseStatus: 204, durationMs: 12, error: null, eventId: body.eventId, eventType: 'task.test' });
    });

    it('event name: each * of the first pattern becomes test; webhook.test without patterns; latest echoed', async () => {
      const a = await makeHook(h, { events: ['*.*.added'] });
      const b = await makeHook(h);
      sent.length = 0;
      await h.post(`/webhooks/${a.id}/test`);
      await h.post(`/webhooks/${b.id}/test`);
      expect(sent.map((s) => s.headers['X-Webhook-Event'])).toEqual(['test.test.added', 'webhook.test']);
      expect(sent[1]!.headers['X-Api-Version']).toBe('latest');
    });

    it('after rotation the test delivery is signed with the new secret only', async () => {
      const w = await makeHook(h);
      const rotated = (await h.post(`/webhooks/${w.id}/rotate-secret`)).body.secret;
      sent.length = 0;
      await h.post(`/webhooks/${w.id}/test`);
      const req = sent[0]!;
      expect(verifyWebhookSignature(req.body, req.headers['X-Webhook-Signature'], rotated, { now: h.clock.now() })).toBe(true);
      expect(verifyWebhookSignature(req.body, req.headers['X-Webhook-Signature'], w.secret, { now: h.clock.now() })).toBe(false);
    });

    it('a failed attempt is reported, not logged, not counted, and not retried; the webhook.test event is recorded', async () => {
      const w = await makeHook(h);
      answer = { ok: false, status: 500, durationMs: 7, error: 'HTTP 500' };
      sent.length = 0;
      try {
        const r = await h.post(`/webhooks/${w.id}/test`);
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ delivered: false, responseStatus: 500, durationMs: 7, error: 'HTTP 500', eventType: 'webhook.test' });
      } finally {
        answer = { ok: true, status: 204, durationMs: 12, error: null };
      }
      expect(sent).toHaveLength(1);
      expect((await dbRow(h, w.id)).fail_count).toBe(0);
      const logged = await h.api.store.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', w.id).execute();
      expect(logged).toHaveLength(0);
      const queued = (await jobs(h)).filter((j) => String(j.event_id).startsWith('test-'));
      expect(queued).toHaveLength(0);
      const ev = (await h.outbox()).filter((e) => e.type === 'webhook.test' && e.aggregateId === w.id);
      expect(ev).toHaveLength(1);
      expect(ev[0].payload.webhook).toMatchObject({ delivered: false, responseStatus: 500 });
    });

    it('another team’s or a trashed webhook is 404', async () => {
      const w = await makeHook(h);
      expect((await h.post(`/webhooks/${w.id}/test`, undefined, { token: h.b.owner.token })).status).toBe(404);
      await h.del(`/webhooks/${w.id}`);
      expect((await h.post(`/webhooks/${w.id}/test`)).status).toBe(404);
    });
  });

  describe(`[${factory.name}] v3 Webhook endpoints: test without a configured sender`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('answers 503 service_unavailable', async () => {
      const w = await makeHook(h);
      const r = await h.post(`/webhooks/${w.id}/test`);
      expect(r.status).toBe(503);
      expect(r.body.code).toBe('service_unavailable');
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 5: manageWebhooks and workspace isolation of webhooks`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory, { api: () => ({ webhookSender: async () => ({ ok: true, status: 200, durationMs: 1, error: null }) }) });
    });
    afterAll(() => h.close());

    it('a regular member (no manageWebhooks) cannot create, update, delete or restore; may read, test and rotate (spec Webhook endpoints: "Test and rotate-secret need webhooks:write")', async () => {
      const token = h.a.regular.token;
      const w = await makeHook(h);
      const denied = async (method: string, path: string, body?: unknown) => {
        const r = await h.req(method, path, { token, body });
        expect(r.status, `${method} ${path}`).toBe(403);
        expect(r.body.code).toBe('permission_denied');
        expect(r.body.missingPermissions).toContain('manageWebhooks');
      };
      await denied('POST', '/webhooks', { url: 'https://hooks.example.com/x' });
      await denied('PATCH', `/webhooks/${w.id}`, { name: 'x' });
      await denied('DELETE', `/webhooks/${w.id}`);
      await h.del(`/webhooks/${w.id}`);
      await denied('POST', `/webhooks/${w.id}/restore`);
      await h.post(`/webhooks/${w.id}/restore`);
      expect((await h.get(`/webhooks/${w.id}`, { token })).status).toBe(200);
      expect((await h.get('/webhooks', { token })).status).toBe(200);
      expect((await h.get(`/webhooks/${w.id}/deliveries`, { token })).status).toBe(200);
      expect((await h.post(`/webhooks/${w.id}/test`, undefined, { token })).status).toBe(200);
      expect((await dbRow(h, w.id)).secret).toBe(w.secret);
      // A token holding webhooks:write alone (no manageWebhooks in the role) rotates the secret.
      const { token: writeOnly } = await h.api.admin.issueToken(h.a.regular.id, { scopes: ['webhooks:write'] });
      const rotated = await h.post(`/webhooks/${w.id}/rotate-secret`, undefined, { token: writeOnly });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      expect(rotated.body.secret).not.toBe(w.secret);
      expect((await dbRow(h, w.id)).secret).toBe(rotated.body.secret);
      // Without webhooks:write it stays refused.
      const { token: readOnly } = await h.api.admin.issueToken(h.a.regular.id, { scopes: ['webhooks:read'] });
      const refused = await h.post(`/webhooks/${w.id}/rotate-secret`, undefined, { token: readOnly });
      expect(refused.status).toBe(403);
      expect(refused.body.missingPermissions).toEqual(['webhooks:write']);
    });

    it("another team's webhook is 404 on every route and absent from its list", async () => {
      const w = await makeHook(h);
      const token = h.b.owner.token;
      for (const [method, path, body] of [
        ['GET', `/webhooks/${w.id}`], ['PATCH', `/webhooks/${w.id}`, { name: 'x' }], ['DELETE', `/webhooks/${w.id}`],
        ['POST', `/webhooks/${w.id}/restore`], ['POST', `/webhooks/${w.id}/rotate-secret`], ['POST', `/webhooks/${w.id}/test`],
        ['GET', `/webhooks/${w.id}/deliveries`],
      ] as Array<[string, string, unknown?]>) {
        const r = await h.req(method, path, { token, body });
        expect(r.status, `${method} ${path}`).toBe(404);
      }
      expect((await h.get('/webhooks', { token })).body.data.map((x: any) => x.id)).not.toContain(w.id);
      const row = await dbRow(h, w.id);
      expect(row.secret).toBe(w.secret);
      expect(row.purge_at).toBeNull();
    });
  });

  describe(`[${factory.name}] v3 Events: a write enqueues one delivery job per matching webhook (Subscribing)`, () => {
    let h: Harness;
    let hooks: Record<string, any>;
    let bAll: any;
    beforeAll(async () => {
      h = await harness(factory);
      hooks = {
        taskStar: await makeHook(h, { events: ['task.*'] }),
        taskStarStar: await makeHook(h, { events: ['task.*.*'] }),
        all: await makeHook(h, { events: ['*'] }),
        exact: await makeHook(h, { events: ['task.created', 'task.created'] }),
        projects: await makeHook(h, { events: ['project.*'] }),
        none: await makeHook(h),
        inactive: await makeHook(h, { events: ['*'], active: false }),
        trashed: await makeHook(h, { events: ['*'] }),
      };
      await h.del(`/webhooks/${hooks.trashed.id}`);
      const b = await h.post('/webhooks', { url: 'https://hooks.example.com/b', events: ['*'] }, { token: h.b.owner.token });
      expect(b.status).toBe(201);
      bAll = b.body;
    });
    afterAll(() => h.close());

    async function during(fn: () => Promise<unknown>) {
      const beforeJobs = new Set((await jobs(h)).map((j) => j.id as string));
      const beforeEvents = new Set((await h.outbox()).map((e) => e.eventId as string));
      await fn();
      return {
        jobs: (await jobs(h)).filter((j) => !beforeJobs.has(j.id as string)),
        events: (await h.outbox()).filter((e) => !beforeEvents.has(e.eventId)),
      };
    }

    it('task.* gets lifecycle events, task.*.* membership events, * everything, exact names once', async () => {
      const p = await h.project();
      const { jobs: js, events } = await during(() => h.task(p.id, { assignees: [h.a.owner.id] }));
      const created = events.find((e) => e.type === 'task.created')!;
      const added = events.find((e) => e.type === 'task.assignees.added')!;
      expect(created && added).toBeTruthy();
      const of = (name: string) => js.filter((j) => j.webhook_id === hooks[name].id).map((j) => j.event_type).sort();
      expect(of('taskStar')).toEqual(['task.created']);
      expect(of('taskStarStar')).toEqual(['task.assignees.added']);
      expect(of('all')).toEqual(events.map((e) => e.type).sort());
      expect(of('exact')).toEqual(['task.created']);
      expect(of('projects')).toEqual([]);
      expect(of('none')).toEqual([]);
      expect(of('inactive')).toEqual([]);
      expect(of('trashed')).toEqual([]);
      expect(js.filter((j) => j.webhook_id === bAll.id)).toEqual([]);
      const job = js.find((j) => j.webhook_id === hooks.taskStar.id)!;
      expect(job).toMatchObject({ id: `${hooks.taskStar.id}:${created.eventId}`, event_id: created.eventId, team_id: h.a.id, status: 'pending', attempts: 0 });
      expect(h.api.store.dialect.decode('timestamp', job.next_attempt_at)).toBe(h.clock.now());
      expect(job.lease_token ?? null).toBeNull();
    });

    it("the other team's writes reach only its own webhooks", async () => {
      const { jobs: js } = await during(() => h.post('/labels', { name: 'B label' }, { token: h.b.owner.token }));
      expect(js.length).toBeGreaterThan(0);
      expect(js.every((j) => j.webhook_id === bAll.id && j.team_id === h.b.id)).toBe(true);
    });

    it('a webhook gets nothing while inactive (those events are lost) and resumes when re-enabled', async () => {
      const p = await h.project();
      await h.patch(`/webhooks/${hooks.taskStar.id}`, { active: false });
      const off = await during(() => h.task(p.id));
      expect(off.jobs.filter((j) => j.webhook_id === hooks.taskStar.id)).toEqual([]);
      await h.patch(`/webhooks/${hooks.taskStar.id}`, { active: true });
      const on = await during(() => h.task(p.id));
      expect(on.jobs.filter((j) => j.webhook_id === hooks.taskStar.id).map((j) => j.event_type)).toEqual(['task.created']);
      expect((await jobs(h)).filter((j) => j.webhook_id === hooks.taskStar.id).length).toBe(2);
    });

    it('a failed write enqueues nothing', async () => {
      const p = await h.project();
      const { jobs: js, events } = await during(async () => {
        const r = await h.post('/tasks', { name: 'x', projectId: p.id, assignees: [h.a.owner.id, 'nobody0001'] });
        expect(r.status).toBe(404);
        const s = await h.post('/tasks', { name: 'x', projectId: p.id, labels: ['nolabel01'] });
        expect(s.status).toBe(404);
      });
      expect(events).toEqual([]);
      expect(js).toEqual([]);
    });

    it('webhook lifecycle events reach subscribed webhooks without the secret', async () => {
      const { jobs: js, events } = await during(() => makeHook(h, { events: ['task.created'] }));
      const created = events.find((e) => e.type === 'webhook.created')!;
      expect(js.filter((j) => j.event_id === created.eventId).map((j) => j.webhook_id)).toEqual([hooks.all.id]);
      expect(created.payload.webhook).not.toHaveProperty('secret');
    });
  });
}
