import type { Pmapi } from '@pmapi/core';

/**
 * The host application's own code under test: when a person joins, give them
 * a "Getting started" project with three tasks and a reminder to finish them
 * (through pmapi's v3 API, acting with their token).
 */
export async function onboard(api: Pmapi, token: string): Promise<{ projectId: string; taskIds: string[] }> {
  const call = async (method: string, path: string, body: unknown) => {
    const res = await api.handle({
      method,
      url: `/api/v3${path}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const parsed = JSON.parse(String(res.body));
    if (res.status >= 300) throw new Error(`onboarding: ${method} ${path} answered ${res.status} ${parsed.code}`);
    return parsed;
  };
  const project = await call('POST', '/projects', { name: 'Getting started' });
  const taskIds: string[] = [];
  for (const name of ['Read the guide', 'Invite a teammate', 'Create your first project']) {
    taskIds.push((await call('POST', '/tasks', { name, projectId: project.id })).id);
  }
  // Remind them tomorrow (the clock is pmapi's: fake in tests).
  await call('POST', '/reminders', { taskId: taskIds[0], date: new Date(api.clock.now() + 24 * 3600_000).toISOString() });
  return { projectId: project.id, taskIds };
}
