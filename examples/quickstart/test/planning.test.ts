import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { startQuickstart, type Seed } from './start';

/**
 * Issue 13 through the quickstart, on SQLite and on Postgres: every planning
 * and tracking resource answers over HTTP (dashboards, reminders, checklists,
 * forms, custom fields on a task, goals on a list, time entries and their
 * search, recurring rules, check-ins and their requests, report charts,
 * automatic milestones). The jobs are tested with a fake clock in the
 * conformance suite; here the quickstart only has to serve what they read.
 */

const pgUrl = inject('pgUrl');

const stores = [
  { name: 'sqlite', args: [] as string[] },
  ...(pgUrl ? [{ name: 'postgres', args: ['--db', pgUrl] }] : []),
];

describe.each(stores)('quickstart [$name]: planning and tracking resources (issue 13)', ({ args }) => {
  let child: ChildProcess;
  let seed: Seed;

  beforeAll(async () => {
    ({ child, seed } = await startQuickstart(args));
  });
  afterAll(() => {
    child?.kill('SIGTERM');
  });

  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const r = await fetch(`${seed.baseUrl}/api/v3${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: r.status === 204 ? undefined : ((await r.json()) as any) };
  };
  const created = (r: { status: number; body: any }) => {
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  };

  it('every resource of the issue is served, with its rules', async () => {
    const owner = seed.teams[0]!.members[0]!;
    const regular = seed.teams[0]!.members[1]!;
    const project = created(await call('POST', '/projects', owner.token, { name: `Planning ${Date.now()}`, members: [regular.id], autoMilestones: true }));
    // autoMilestones: the monthly milestone lists are made with the project.
    const milestones = (await call('GET', `/lists?projectId=${project.id}&isMilestone[eq]=true&limit=200`, owner.token)).body.data;
    expect(milestones).toHaveLength(12);
    const task = created(await call('POST', '/tasks', owner.token, { name: 'Plan the launch', projectId: project.id }));

    const board = created(await call('POST', '/project-dashboards', owner.token, { name: 'Launch board', projectId: project.id, isDefault: true, isShared: false, widgets: [{ type: 'tasks' }] }));
    expect(board).toMatchObject({ isDefault: true, isShared: true });
    expect(board.widgets[0]).toMatchObject({ type: 'tasks', position: 0 });

    const reminder = created(await call('POST', '/reminders', regular.token, { taskId: task.id, date: new Date(Date.now() + 3600_000).toISOString() }));
    expect(reminder.type).toBe('custom');
    expect((await call('GET', `/reminders/${reminder.id}`, owner.token)).status).toBe(404);

    const checklist = created(await call('POST', '/checklists', owner.token, { name: 'Before launch', taskId: task.id }));
    created(await call('POST', '/checklist-items', owner.token, { name: 'Press kit', checklistId: checklist.id }));

    const form = created(await call('POST', '/forms', owner.token, { meta: { title: 'Launch feedback' }, fields: [{ type: 'shortText', title: 'Your name' }] }));
    expect(form).toMatchObject({ name: 'Launch feedback', docAccessType: 'public', url: null });

    const field = created(await call('POST', '/custom-fields', owner.token, { name: `Budget ${Date.now()}`, type: 'number' }));
    const withValue = await call('PATCH', `/tasks/${task.id}`, owner.token, { customFields: [{ customFieldId: field.id, value: '1200' }] });
    expect(withValue.status, JSON.stringify(withValue.body)).toBe(200);
    expect((await call('PATCH', `/tasks/${task.id}`, owner.token, { customFields: [{ customFieldId: field.id, value: 'lots' }] })).status).toBe(400);

    const goal = created(await call('POST', '/goals', owner.token, { name: 'Ship v1' }));
    const list = created(await call('POST', '/lists', owner.token, { name: 'Sprint 1', projectId: project.id }));
    expect((await call('POST', `/lists/${list.id}/goals`, owner.token, { ids: [goal.id] })).status).toBe(200);
    expect((await call('GET', `/lists/${list.id}?expand=goals`, owner.token)).body.goals.map((g: any) => g.id)).toEqual([goal.id]);

    const start = Date.now() - 2 * 3600_000;
    const entry = created(await call('POST', '/time-entries', regular.token, { taskId: task.id, startAt: new Date(start).toISOString(), endAt: new Date(start + 1800_000).toISOString(), description: 'launch planning' }));
    expect(entry.durationSeconds).toBe(1800);
    expect((await call('GET', '/time-entries/search?q=launch', regular.token)).body.data.map((e: any) => e.id)).toEqual([entry.id]);

    const rule = created(await call('POST', '/recurring-rules', owner.token, { name: 'Weekly report', projectId: project.id, frequency: 'weekly' }));
    expect(typeof rule.nextRunAt).toBe('string');

    const request = created(await call('POST', '/check-in-requests', owner.token, { question: 'How is it going?', projectId: project.id, startAt: new Date().toISOString(), assignees: [regular.id] }));
    const checkIn = created(await call('POST', '/check-ins', regular.token, { text: 'On track', projectId: project.id, checkInRequestId: request.id, health: 'onTrack' }));
    expect(checkIn.checkInRequestId).toBe(request.id);

    const chart = created(await call('POST', '/report-charts', owner.token, { name: 'Burndown', type: 'burndown', projects: [project.id] }));
    expect(chart.projects).toEqual([project.id]);
  });
});
