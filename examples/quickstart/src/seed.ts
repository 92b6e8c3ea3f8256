import type { Pmapi } from '@pmapi/core';

export interface SeededMember {
  id: string;
  role: string;
  token: string;
}

export interface SeededTeam {
  id: string;
  members: SeededMember[];
}

/** Member display names, for the demo sign-in page. */
export const demoNames = new Map<string, string>();

const ALL = ['read', 'write', 'delete'];

/**
 * Seed two demo workspaces through the admin API: Acme (owner, regular and
 * client members) and Globex (an owner), so that isolation can be tried.
 */
export async function seedDemo(api: Pmapi): Promise<SeededTeam[]> {
  const acme = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada Owner', email: 'ada@acme.test' } });
  const reg = await api.admin.addMember(acme.id, { name: 'Rex Regular', email: 'rex@acme.test', role: 'regular' });
  const cli = await api.admin.addMember(acme.id, { name: 'Cleo Client', email: 'cleo@client.test', role: 'client' });
  const globex = await api.admin.createWorkspace({ name: 'Globex', owner: { name: 'Gus Owner', email: 'gus@globex.test' } });
  const token = async (memberId: string) => (await api.admin.issueToken(memberId, { scopes: ALL, name: 'quickstart' })).token;
  demoNames.set(acme.ownerMemberId, 'Ada Owner').set(reg.id, 'Rex Regular').set(cli.id, 'Cleo Client').set(globex.ownerMemberId, 'Gus Owner');
  return [
    {
      id: acme.id,
      members: [
        { id: acme.ownerMemberId, role: 'owner', token: await token(acme.ownerMemberId) },
        { id: reg.id, role: 'regular', token: await token(reg.id) },
        { id: cli.id, role: 'client', token: await token(cli.id) },
      ],
    },
    { id: globex.id, members: [{ id: globex.ownerMemberId, role: 'owner', token: await token(globex.ownerMemberId) }] },
  ];
}
