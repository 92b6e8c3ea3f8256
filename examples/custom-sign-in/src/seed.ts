import type { Pmapi } from '@pmapi/core';

/**
 * Demo data: Pat belongs to two workspaces (one person, two memberships
 * sharing a userId), so the consent page offers a choice; one public app.
 */
export async function seed(api: Pmapi, redirectUri: string) {
  const acme = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ann' } });
  const globex = await api.admin.createWorkspace({ name: 'Globex', owner: { name: 'Gil' } });
  const patAtAcme = await api.admin.addMember(acme.id, { name: 'Pat', role: 'manager' });
  const patAtGlobex = await api.admin.addMember(globex.id, { name: 'Pat', role: 'regular', userId: patAtAcme.userId });
  const { clientId } = await api.admin.registerOAuthClient({ name: 'Pocket Planner', type: 'public', redirectUris: [redirectUri] });
  return { acme, globex, patAtAcme, patAtGlobex, clientId };
}
