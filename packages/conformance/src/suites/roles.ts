import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';

/** Status and code of a reply, compared together so a failure shows both. */
function problem(r: Reply): { status: number; code: unknown } {
  return { status: r.status, code: r.body?.code };
}

const sorted = (xs: string[]) => [...xs].sort();
const BUILTIN = ['owner', 'manager', 'regular', 'client'] as const;

/** A member of workspace A with a custom role, and a token with the given scopes. */
async function memberWithRole(h: Harness, roleName: string, scopes: string[] = ['read', 'write', 'delete']): Promise<{ id: string; token: string }> {
  const m = await h.api.admin.addMember(h.a.id, { name: `Holder of ${roleName}`, role: roleName });
  const t = await h.api.admin.issueToken(m.id, { scopes });
  return { id: m.id, token: t.token };
}

async function createRole(h: Harness, body: Record<string, unknown>, token?: string): Promise<any> {
  const r = await h.post('/roles', body, { token });
  if (r.status !== 201) throw new Error(`role create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export function rolesSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Role: built-in roles`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('every workspace has the four built-in roles, editable false, showing their effective permissions', async () => {
      const r = await h.get('/roles?editable[eq]=false');
      expect(r.status).toBe(200);
      expect(sorted(r.body.data.map((x: any) => x.name))).toEqual(sorted([...BUILTIN]));
      const by = Object.fromEntries(r.body.data.map((x: any) => [x.name, x]));
      for (const name of BUILTIN) {
        expect(by[name].id).toBe(h.a.roleIds[name]);
        expect(by[name].editable).toBe(false);
        expect(by[name].initialScreen).toBeNull();
      }
      expect(sorted(by.owner.permissions)).toEqual(sorted([...h.api.permissions]));
      expect(sorted(by.manager.permissions)).toEqual(sorted([...h.api.permissions]));
      expect(by.regular.permissions).toEqual(expect.arrayContaining(['tasks:read', 'tasks:write', 'tasks:delete', 'roles:write']));
      expect(by.regular.permissions).not.toContain('manageRoles');
      expect(by.regular.permissions).not.toContain('projects:delete');
      expect(by.client.permissions).toEqual(expect.arrayContaining(['tasks:read', 'tasks:write', 'projects:read']));
      expect(by.client.permissions).not.toContain('projects:write');
      expect(by.client.permissions).not.toContain('roles:read');
      // The same on a single GET and through an expand.
      const one = await h.get(`/roles/${h.a.roleIds.regular}`);
      expect(sorted(one.body.permissions)).toEqual(sorted(by.regular.permissions));
      const member = await h.get(`/members/${h.a.regular.id}?expand=roleRecord`);
      expect(sorted(member.body.roleRecord.permissions)).toEqual(sorted(by.regular.permissions));
    });

    it('a built-in role accepts a change to initialScreen only', async () => {
      const id = h.a.roleIds.regular;
      const before = (await h.get(`/roles/${id}`)).body;
      const ok = await h.patch(`/roles/${id}`, { initialScreen: '  my-tasks ' });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body).toMatchObject({ name: 'regular', editable: false, initialScreen: 'my-tasks' });
      expect(sorted(ok.body.permissions)).toEqual(sorted(before.permissions));
      const cleared = await h.patch(`/roles/${id}`, { initialScreen: null });
      expect(cleared.body.initialScreen).toBeNull();
    });

    it('changing a built-in role\'s name or permissions is 403 default_role_locked, for all four', async () => {
      for (const name of BUILTIN) {
        const id = h.a.roleIds[name];
        const rename = await h.patch(`/roles/${id}`, { name: `${name} renamed` });
        expect(problem(rename), name).toEqual({ status: 403, code: 'default_role_locked' });
        const perms = await h.patch(`/roles/${id}`, { permissions: ['tasks:read'] });
        expect(problem(perms), name).toEqual({ status: 403, code: 'default_role_locked' });
        const emptied = await h.patch(`/roles/${id}`, { permissions: [] });
        expect(problem(emptied), name).toEqual({ status: 403, code: 'default_role_locked' });
        const mixed = await h.patch(`/roles/${id}`, { initialScreen: 'x', name: 'other' });
        expect(problem(mixed), name).toEqual({ status: 403, code: 'default_role_locked' });
      }
      const got = await h.get(`/roles/${h.a.roleIds.client}`);
      expect(got.body).toMatchObject({ name: 'client', initialScreen: null });
      // The locked role still works as before.
      expect((await h.get('/tasks', { token: h.a.client.token })).status).toBe(200);
    });

    it('sending back what was read (same name, same effective permissions) is not a change', async () => {
      const id = h.a.roleIds.manager;
      const read = (await h.get(`/roles/${id}`)).body;
      const r = await h.patch(`/roles/${id}`, { name: read.name, permissions: [...read.permissions].reverse(), initialScreen: 'home' });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ name: 'manager', initialScreen: 'home' });
      expect(sorted(r.body.permissions)).toEqual(sorted(read.permissions));
      // Nothing but initialScreen reached the row: built-in permissions are never stored.
      const row = await h.api.store.db.selectFrom('roles').select(['permissions']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(h.api.store.dialect.decode('json', row.permissions)).toEqual([]);
    });

    it('deleting a built-in role is 403 default_role_locked, for all four', async () => {
      for (const name of BUILTIN) {
        const r = await h.del(`/roles/${h.a.roleIds[name]}`);
        expect(problem(r), name).toEqual({ status: 403, code: 'default_role_locked' });
        expect((await h.get(`/roles/${h.a.roleIds[name]}`)).status).toBe(200);
      }
    });
  });

  describe(`[${factory.name}] v3 Role: custom roles (name, editable, permissions, initialScreen)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('creates a custom role: editable true whatever is sent, name trimmed, permissions and initialScreen stored; role.created', async () => {
      const r = await h.post('/roles', { name: '  Designer  ', editable: false, permissions: ['tasks:read', 'tasks:write', 'tasks:read'], initialScreen: 'board' });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body).toMatchObject({ name: 'Designer', editable: true, permissions: ['tasks:read', 'tasks:write'], initialScreen: 'board' });
      expect(r.body.createdByActorId).toBeTypeOf('string');
      const got = await h.get(`/roles/${r.body.id}`);
      expect(got.body).toMatchObject({ name: 'Designer', editable: true, permissions: ['tasks:read', 'tasks:write'] });
      const ev = (await h.outbox()).find((e) => e.type === 'role.created' && e.aggregateId === r.body.id);
      expect(ev.payload.role).toMatchObject({ name: 'Designer', permissions: ['tasks:read', 'tasks:write'] });
    });

    it('name is required, 1-100 characters after trimming', async () => {
      const none = await h.post('/roles', { permissions: [] });
      expect(problem(none)).toEqual({ status: 400, code: 'validation_failed' });
      expect(none.body.errors).toEqual([expect.objectContaining({ field: 'name', code: 'required' })]);
      const blank = await h.post('/roles', { name: '   ' });
      expect(problem(blank)).toEqual({ status: 400, code: 'validation_failed' });
      expect(blank.body.errors[0].field).toBe('name');
      const long = await h.post('/roles', { name: 'x'.repeat(101) });
      expect(problem(long)).toEqual({ status: 400, code: 'validation_failed' });
      expect((await h.post('/roles', { name: 'y'.repeat(100) })).status).toBe(201);
    });

    it('names of the built-in roles are refused in any case: 400 validation_failed on name', async () => {
      for (const name of ['owner', 'Manager', 'REGULAR', '  client  ', 'ClIeNt']) {
        const r = await h.post('/roles', { name });
        expect(problem(r), name).toEqual({ status: 400, code: 'validation_failed' });
        expect(r.body.errors, name).toEqual([expect.objectContaining({ field: 'name', code: 'reserved_name' })]);
      }
      const role = await createRole(h, { name: 'Renamable' });
      const rename = await h.patch(`/roles/${role.id}`, { name: 'Owner' });
      expect(problem(rename)).toEqual({ status: 400, code: 'validation_failed' });
      expect(rename.body.errors[0]).toMatchObject({ field: 'name', code: 'reserved_name' });
      expect((await h.get(`/roles/${role.id}`)).body.name).toBe('Renamable');
    });

    it('names are unique in the workspace (in any case): 409 conflict; another workspace may reuse one', async () => {
      await createRole(h, { name: 'Auditor' });
      const dup = await h.post('/roles', { name: 'Auditor' });
      expect(problem(dup)).toEqual({ status: 409, code: 'conflict' });
      const caseDup = await h.post('/roles', { name: 'auditor' });
      expect(problem(caseDup)).toEqual({ status: 409, code: 'conflict' });
      const other = await createRole(h, { name: 'Reviewer' });
      const rename = await h.patch(`/roles/${other.id}`, { name: 'AUDITOR' });
      expect(problem(rename)).toEqual({ status: 409, code: 'conflict' });
      const same = await h.patch(`/roles/${other.id}`, { name: 'Reviewer', initialScreen: 'inbox' });
      expect(same.status).toBe(200);
      const b = await h.post('/roles', { name: 'Auditor' }, { token: h.b.owner.token });
      expect(b.status).toBe(201);
    });

    it('two concurrent creates of one name (in different case): one 201, one 409 conflict', async () => {
      const [x, y] = await Promise.all([h.post('/roles', { name: 'Racer' }), h.post('/roles', { name: 'racer' })]);
      expect([x.status, y.status].sort()).toEqual([201, 409]);
      expect((await h.get('/roles?name[contains]=racer')).body.data).toHaveLength(1);
    });

    it('an unknown permission name is 400 validation_failed naming the unknown ones (create and update)', async () => {
      const r = await h.post('/roles', { name: 'Bad perms', permissions: ['tasks:read', 'tasks:fly', 'beAdmin'] });
      expect(problem(r)).toEqual({ status: 400, code: 'validation_failed' });
      expect(r.body.unknownPermissions).toEqual(['tasks:fly', 'beAdmin']);
      expect(r.body.errors.map((e: any) => e.field)).toEqual(['permissions', 'permissions']);
      expect(r.body.errors.map((e: any) => e.message).join(' ')).toMatch(/tasks:fly.*beAdmin/);
      const notStrings = await h.post('/roles', { name: 'Bad perms', permissions: 'tasks:read' });
      expect(problem(notStrings)).toEqual({ status: 400, code: 'validation_failed' });
      const role = await createRole(h, { name: 'Good perms', permissions: ['tasks:read'] });
      const u = await h.patch(`/roles/${role.id}`, { permissions: ['tasks:read', 'read'] });
      expect(problem(u)).toEqual({ status: 400, code: 'validation_failed' });
      expect(u.body.unknownPermissions).toEqual(['read']);
    });

    it('omitted or [] permissions grant nothing: a holder is refused even with a full-scope token', async () => {
      const omitted = await createRole(h, { name: 'Nothing' });
      expect(omitted.permissions).toEqual([]);
      const empty = await createRole(h, { name: 'Empty', permissions: [] });
      expect(empty.permissions).toEqual([]);
      const m = await memberWithRole(h, 'Nothing');
      const r = await h.get('/tasks', { token: m.token });
      expect(problem(r)).toEqual({ status: 403, code: 'permission_denied' });
      expect(r.body.missingPermissions).toEqual(['tasks:read']);
    });

    it('a custom role grants exactly its permissions', async () => {
      await createRole(h, { name: 'Task reader', permissions: ['tasks:read', 'projects:read'] });
      const m = await memberWithRole(h, 'Task reader');
      expect((await h.get('/tasks', { token: m.token })).status).toBe(200);
      const p = await h.project();
      const w = await h.post('/tasks', { name: 'T', projectId: p.id }, { token: m.token });
      expect(problem(w)).toEqual({ status: 403, code: 'permission_denied' });
      expect(w.body.missingPermissions).toEqual(['tasks:write']);
    });

    it('initialScreen is free text of at most 100 characters (trimmed); null clears it', async () => {
      const role = await createRole(h, { name: 'Screens', initialScreen: ' dashboard/overview ' });
      expect(role.initialScreen).toBe('dashboard/overview');
      const long = await h.patch(`/roles/${role.id}`, { initialScreen: 's'.repeat(101) });
      expect(problem(long)).toEqual({ status: 400, code: 'validation_failed' });
      expect(long.body.errors[0].field).toBe('initialScreen');
      const ok = await h.patch(`/roles/${role.id}`, { initialScreen: 's'.repeat(100) });
      expect(ok.body.initialScreen).toBe('s'.repeat(100));
      const cleared = await h.patch(`/roles/${role.id}`, { initialScreen: null });
      expect(cleared.body.initialScreen).toBeNull();
    });

    it('editable is read-only: ignored in bodies', async () => {
      const role = await createRole(h, { name: 'Stays editable' });
      const r = await h.patch(`/roles/${role.id}`, { editable: false, initialScreen: 'x' });
      expect(r.status).toBe(200);
      expect(r.body.editable).toBe(true);
    });

    it('renaming a custom role renames it on its holders (member.role), with member.updated', async () => {
      const role = await createRole(h, { name: 'Old name', permissions: ['tasks:read'] });
      const m = await memberWithRole(h, 'Old name');
      const r = await h.patch(`/roles/${role.id}`, { name: 'New name' });
      expect(r.status).toBe(200);
      const member = await h.get(`/members/${m.id}`);
      expect(member.body).toMatchObject({ role: 'New name', roleId: role.id });
      const ev = (await h.outbox()).filter((e) => e.type === 'member.updated' && e.aggregateId === m.id);
      expect(ev.at(-1).payload.member).toMatchObject({ role: 'New name' });
    });

    it('list filters name, editable, createdAt; default sort name', async () => {
      const all = await h.get('/roles?limit=200');
      const names = all.body.data.map((x: any) => x.name);
      expect(names).toEqual([...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)));
      const custom = await h.get('/roles?editable[eq]=true&limit=200');
      expect(custom.body.data.length).toBeGreaterThan(0);
      expect(custom.body.data.every((x: any) => x.editable === true)).toBe(true);
      expect(custom.body.data.map((x: any) => x.name)).not.toContain('owner');
      const starts = await h.get('/roles?name[startsWith]=aud');
      expect(starts.body.data.map((x: any) => x.name)).toEqual(['Auditor']);
      const later = await h.get(`/roles?createdAt[gt]=${encodeURIComponent('2026-03-01T09:00:00.000Z')}&editable[eq]=false`);
      expect(later.body.data).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Role: who may write roles (manageRoles, permission_exceeds_caller_grant)`, () => {
    let h: Harness;
    let admin: { id: string; token: string };
    beforeAll(async () => {
      h = await harness(factory);
      await createRole(h, {
        name: 'Role admin',
        permissions: ['roles:write', 'roles:delete', 'manageRoles', 'tasks:read', 'projects:write'],
      });
      admin = await memberWithRole(h, 'Role admin', ['write', 'delete']);
    });
    afterAll(() => h.close());

    it('a regular member (no manageRoles) with a write token: 403 permission_denied, missingPermissions [manageRoles]', async () => {
      const role = await createRole(h, { name: 'Target' });
      const c = await h.post('/roles', { name: 'Mine' }, { token: h.a.regular.token });
      expect(problem(c)).toEqual({ status: 403, code: 'permission_denied' });
      expect(c.body.missingPermissions).toEqual(['manageRoles']);
      const u = await h.patch(`/roles/${role.id}`, { name: 'Changed' }, { token: h.a.regular.token });
      expect(problem(u)).toEqual({ status: 403, code: 'permission_denied' });
      expect(u.body.missingPermissions).toEqual(['manageRoles']);
      const d = await h.del(`/roles/${role.id}`, { token: h.a.regular.token });
      expect(problem(d)).toEqual({ status: 403, code: 'permission_denied' });
      // A regular member deletes work items only: roles:delete is missing too.
      expect(d.body.missingPermissions).toEqual(['roles:delete', 'manageRoles']);
      // Reading roles needs no manageRoles.
      expect((await h.get('/roles', { token: h.a.regular.token })).status).toBe(200);
      const client = await h.post('/roles', { name: 'Mine' }, { token: h.a.client.token });
      expect(client.body.missingPermissions).toEqual(['roles:write', 'manageRoles']);
    });

    it('the token still needs the roles scope: a read-only token of the owner is refused', async () => {
      const t = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['read'] });
      const r = await h.post('/roles', { name: 'Nope' }, { token: t.token });
      expect(problem(r)).toEqual({ status: 403, code: 'permission_denied' });
      expect(r.body.missingPermissions).toEqual(['roles:write']);
    });

    it('a caller may grant only permissions they hold: 403 permission_exceeds_caller_grant naming the others', async () => {
      const ok = await h.post('/roles', { name: 'Granted', permissions: ['tasks:read', 'manageRoles'] }, { token: admin.token });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
      // x:write held implies x:read.
      const implied = await h.post('/roles', { name: 'Implied', permissions: ['projects:read'] }, { token: admin.token });
      expect(implied.status, JSON.stringify(implied.body)).toBe(201);
      const r = await h.post('/roles', { name: 'Too much', permissions: ['tasks:read', 'tasks:write', 'viewAllProjects'] }, { token: admin.token });
      expect(problem(r)).toEqual({ status: 403, code: 'permission_exceeds_caller_grant' });
      expect(r.body.exceedingPermissions).toEqual(['tasks:write', 'viewAllProjects']);
      expect((await h.get('/roles?name[eq]=Too%20much')).body.data).toEqual([]);
      // The owner holds everything.
      expect((await h.post('/roles', { name: 'Too much', permissions: ['tasks:read', 'tasks:write', 'viewAllProjects'] })).status).toBe(201);
    });

    it('on update the grant is judged on the delta: kept permissions may stay, only added ones are checked', async () => {
      const role = await createRole(h, { name: 'Delta', permissions: ['tasks:delete', 'tasks:read'] });
      const keep = await h.patch(`/roles/${role.id}`, { permissions: ['tasks:delete', 'tasks:read', 'projects:read'] }, { token: admin.token });
      expect(keep.status, JSON.stringify(keep.body)).toBe(200);
      expect(keep.body.permissions).toEqual(['tasks:delete', 'tasks:read', 'projects:read']);
      const add = await h.patch(`/roles/${role.id}`, { permissions: ['tasks:delete', 'labels:write', 'statuses:delete'] }, { token: admin.token });
      expect(problem(add)).toEqual({ status: 403, code: 'permission_exceeds_caller_grant' });
      expect(add.body.exceedingPermissions).toEqual(['labels:write', 'statuses:delete']);
      // Removing what the caller lacks is allowed.
      const remove = await h.patch(`/roles/${role.id}`, { permissions: ['tasks:read'] }, { token: admin.token });
      expect(remove.status).toBe(200);
      expect(remove.body.permissions).toEqual(['tasks:read']);
      // Once removed, putting it back is an addition again.
      const back = await h.patch(`/roles/${role.id}`, { permissions: ['tasks:read', 'tasks:delete'] }, { token: admin.token });
      expect(problem(back)).toEqual({ status: 403, code: 'permission_exceeds_caller_grant' });
      expect(back.body.exceedingPermissions).toEqual(['tasks:delete']);
      // Other fields of a role holding permissions beyond the caller's can still change.
      const rename = await h.patch(`/roles/${role.id}`, { name: 'Delta 2' }, { token: admin.token });
      expect(rename.status).toBe(200);
    });

    it('unknown names are reported before the grant check (400, not 403)', async () => {
      const r = await h.post('/roles', { name: 'Unknown first', permissions: ['tasks:write', 'nope:read'] }, { token: admin.token });
      expect(problem(r)).toEqual({ status: 400, code: 'validation_failed' });
      expect(r.body.unknownPermissions).toEqual(['nope:read']);
    });
  });

  describe(`[${factory.name}] v3 Role: delete outcomes (403 built-in, 409 held by an active member, removed members move to regular)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('a custom role nobody holds is deleted (204) and role.removed is emitted', async () => {
      const role = await createRole(h, { name: 'Unused' });
      const r = await h.del(`/roles/${role.id}`);
      expect(r.status).toBe(204);
      expect((await h.get(`/roles/${role.id}`)).status).toBe(404);
      const ev = (await h.outbox()).find((e) => e.type === 'role.removed' && e.aggregateId === role.id);
      expect(ev.payload.role).toMatchObject({ id: role.id, name: 'Unused' });
      expect(problem(await h.del(`/roles/${role.id}`))).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it('a role held by an active member is 409 conflict and stays', async () => {
      const role = await createRole(h, { name: 'Held', permissions: ['tasks:read'] });
      const m = await memberWithRole(h, 'Held');
      const r = await h.del(`/roles/${role.id}`);
      expect(problem(r)).toEqual({ status: 409, code: 'conflict' });
      expect(r.body.activeMemberIds).toEqual([m.id]);
      expect((await h.get(`/roles/${role.id}`)).status).toBe(200);
      expect((await h.get('/tasks', { token: m.token })).status).toBe(200);
    });

    it('removed-from-team members still holding it move to the regular role (member.updated); active holders block first', async () => {
      const role = await createRole(h, { name: 'Leaving', permissions: ['tasks:read'] });
      const gone1 = await memberWithRole(h, 'Leaving');
      const gone2 = await memberWithRole(h, 'Leaving');
      const staying = await memberWithRole(h, 'Leaving');
      await h.api.admin.setMemberActive(gone1.id, false);
      await h.api.admin.setMemberActive(gone2.id, false);
      expect(problem(await h.del(`/roles/${role.id}`))).toEqual({ status: 409, code: 'conflict' });
      // Nothing moved by the refused delete.
      expect((await h.get(`/members/${gone1.id}`)).body.roleId).toBe(role.id);
      await h.api.admin.setMemberActive(staying.id, false);
      const r = await h.del(`/roles/${role.id}`);
      expect(r.status, JSON.stringify(r.body)).toBe(204);
      for (const m of [gone1, gone2, staying]) {
        const got = await h.get(`/members/${m.id}`);
        expect(got.body).toMatchObject({ role: 'regular', roleId: h.a.roleIds.regular, active: false });
      }
      const events = await h.outbox();
      for (const m of [gone1, gone2, staying]) {
        // The one of the move (deactivating emitted one before, with the old role; events of one instant have no order).
        const ev = events.find((e) => e.type === 'member.updated' && e.aggregateId === m.id && e.payload.member.roleId === h.a.roleIds.regular);
        expect(ev?.payload.member).toMatchObject({ role: 'regular', roleId: h.a.roleIds.regular });
      }
      expect(events.some((e) => e.type === 'role.removed' && e.aggregateId === role.id)).toBe(true);
      // Reactivated, a moved member has the regular role's permissions.
      await h.api.admin.setMemberActive(gone1.id, true);
      const p = await h.project({ accessType: 'public' });
      expect((await h.post('/tasks', { name: 'Back', projectId: p.id }, { token: gone1.token })).status).toBe(201);
    });

    it('removed (trashed: DELETE /members/{id}) holders move to the regular role too: restored, the member holds regular and their token authenticates', async () => {
      const role = await createRole(h, { name: 'Trashed holder', permissions: ['tasks:read'] });
      const gone = await memberWithRole(h, 'Trashed holder');
      expect((await h.del(`/members/${gone.id}`)).status).toBe(204);
      const r = await h.del(`/roles/${role.id}`);
      expect(r.status, JSON.stringify(r.body)).toBe(204);
      expect((await h.post(`/members/${gone.id}/restore`)).status).toBe(200);
      expect((await h.get(`/members/${gone.id}`)).body).toMatchObject({ role: 'regular', roleId: h.a.roleIds.regular });
      expect((await h.get('/tasks', { token: gone.token })).status).toBe(200);
    });

    it('renaming a role renames it on removed (trashed) holders too: restored, the member carries the new name', async () => {
      const role = await createRole(h, { name: 'Old name', permissions: ['tasks:read'] });
      const gone = await memberWithRole(h, 'Old name');
      expect((await h.del(`/members/${gone.id}`)).status).toBe(204);
      expect((await h.patch(`/roles/${role.id}`, { name: 'New name' })).status).toBe(200);
      expect((await h.post(`/members/${gone.id}/restore`)).status).toBe(200);
      expect((await h.get(`/members/${gone.id}`)).body).toMatchObject({ role: 'New name', roleId: role.id });
    });

    it("a deleted role leaves lists' hiddenFor", async () => {
      const role = await createRole(h, { name: 'Hidden' });
      const p = await h.project();
      const list = await h.post('/lists', { name: 'L', projectId: p.id, hiddenFor: [role.id, h.a.roleIds.client] });
      expect(list.status, JSON.stringify(list.body)).toBe(201);
      expect((await h.del(`/roles/${role.id}`)).status).toBe(204);
      expect((await h.get(`/lists/${list.body.id}`)).body.hiddenFor).toEqual([h.a.roleIds.client]);
    });
  });

  describe(`[${factory.name}] v3 Role: delete when the workspace has no regular role (409)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('is 409 conflict and moves nobody', async () => {
      const role = await createRole(h, { name: 'Orphaned', permissions: ['tasks:read'] });
      const m = await memberWithRole(h, 'Orphaned');
      await h.api.admin.setMemberActive(m.id, false);
      // The built-in regular role cannot be deleted through the API: remove its row directly.
      await h.api.store.db.deleteFrom('roles').where('id', '=', h.a.roleIds.regular).execute();
      const r = await h.del(`/roles/${role.id}`);
      expect(problem(r)).toEqual({ status: 409, code: 'conflict' });
      expect((await h.get(`/members/${m.id}`)).body.roleId).toBe(role.id);
      expect((await h.get(`/roles/${role.id}`)).status).toBe(200);
      // Workspace B, which still has its regular role, is unaffected.
      const b = await createRole(h, { name: 'B role' }, h.b.owner.token);
      expect((await h.del(`/roles/${b.id}`, { token: h.b.owner.token })).status).toBe(204);
    });
  });

  describe(`[${factory.name}] v3 Standard operations: Search (GET /roles/search, rule 9)`, () => {
    let h: Harness;
    // Relevance order differs from name order: 'Art design' sorts first by name but is only a substring match;
    // the exact match 'design' sorts after 'Design lead' by code point.
    const names = ['Web', 'UX design team', 'Lead design', 'Designer', 'Design lead', 'design', 'Graphic designers', 'Art design'];
    const ids: Record<string, string> = {};
    const RANKED = ['design', 'Design lead', 'Designer', 'Art design', 'Graphic designers', 'Lead design', 'UX design team'];
    beforeAll(async () => {
      h = await harness(factory);
      for (const name of names) ids[name] = (await createRole(h, { name, permissions: ['tasks:read'] })).id;
      await h.post('/roles', { name: 'Design' }, { token: h.b.owner.token });
    });
    afterAll(() => h.close());

    const search = (qs: string, token?: string) => h.get(`/roles/search?${qs}`, { token });

    it('q missing: 400 search_query_missing', async () => {
      expect(problem(await search(''))).toEqual({ status: 400, code: 'search_query_missing' });
      expect(problem(await search('limit=5'))).toEqual({ status: 400, code: 'search_query_missing' });
    });

    it('q is trimmed, then under 3 characters is search_query_too_short and over 200 search_query_too_long', async () => {
      expect(problem(await search('q=ab'))).toEqual({ status: 400, code: 'search_query_too_short' });
      expect(problem(await search(`q=${encodeURIComponent('   ab   ')}`))).toEqual({ status: 400, code: 'search_query_too_short' });
      expect(problem(await search('q='))).toEqual({ status: 400, code: 'search_query_too_short' });
      expect(problem(await search(`q=${'a'.repeat(201)}`))).toEqual({ status: 400, code: 'search_query_too_long' });
      const edge = await search(`q=${encodeURIComponent(`  ${'a'.repeat(200)}  `)}`);
      expect(edge.status).toBe(200);
      expect(edge.body.data).toEqual([]);
      const three = await search(`q=${encodeURIComponent(' web ')}`);
      expect(three.status).toBe(200);
      expect(three.body.data.map((r: any) => r.name)).toEqual(['Web']);
    });

    it('q holding a URL, script, HTML or e-mail address is search_query_invalid with reason', async () => {
      const cases: Array<[string, string]> = [
        ['https://evil.example/x', 'url'],
        ['see www.example.com now', 'url'],
        ['ftp://files.example.org', 'url'],
        ['<script>alert(1)</script>', 'script'],
        ['javascript:alert(1)', 'script'],
        ['<img src=x onerror=alert(1)>', 'script'],
        ['<b>design</b>', 'html'],
        ['design <div class="x">', 'html'],
        ['<!-- comment -->', 'html'],
        ['mail ada@example.com', 'email'],
        ['mailto:ada', 'email'],
      ];
      for (const [q, reason] of cases) {
        const r = await search(`q=${encodeURIComponent(q)}`);
        expect(problem(r), q).toEqual({ status: 400, code: 'search_query_invalid' });
        expect(r.body.reason, q).toBe(reason);
      }
      // Look-alikes that are none of these.
      for (const q of ['a < b > c', 'R&D team', 'design@', 'v1.2 leads']) {
        expect((await search(`q=${encodeURIComponent(q)}`)).status, q).toBe(200);
      }
    });

    it('ranks by relevance: exact name, then prefix, then substring; ties by name then id; case-insensitive', async () => {
      const r = await search('q=design');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data.map((x: any) => x.name)).toEqual(RANKED);
      const upper = await search('q=DESIGN');
      expect(upper.body.data.map((x: any) => x.id)).toEqual(r.body.data.map((x: any) => x.id));
      expect(r.body).toMatchObject({ hasMore: false, nextCursor: null, limit: 50 });
      expect(r.body.total).toBeUndefined();
      // Only this workspace's roles.
      expect(r.body.data.map((x: any) => x.id)).toContain(ids.design);
    });

    it('pages with cursor and limit over the ranked list; includeTotal; limit clamped to 200', async () => {
      const seen: string[] = [];
      let url = 'q=design&limit=2&includeTotal=true';
      let pages = 0;
      for (;;) {
        const r = await search(url);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.total).toBe(7);
        expect(r.body.limit).toBe(2);
        seen.push(...r.body.data.map((x: any) => x.name));
        pages++;
        if (!r.body.hasMore) {
          expect(r.body.nextCursor).toBeNull();
          break;
        }
        url = `q=design&limit=2&includeTotal=true&cursor=${encodeURIComponent(r.body.nextCursor)}`;
      }
      expect(pages).toBe(4);
      expect(seen).toEqual(RANKED);
      const clamped = await search('q=design&limit=1000');
      expect(clamped.body.limit).toBe(200);
      expect(problem(await search('q=design&limit=0'))).toEqual({ status: 400, code: 'invalid_query_param' });
    });

    it('a cursor is bound to its q, filters and endpoint: otherwise cursor_invalid', async () => {
      const first = await search('q=design&limit=1');
      const c = encodeURIComponent(first.body.nextCursor);
      expect(problem(await search(`q=designer&limit=1&cursor=${c}`))).toEqual({ status: 400, code: 'cursor_invalid' });
      expect(problem(await search(`q=design&editable[eq]=true&limit=1&cursor=${c}`))).toEqual({ status: 400, code: 'cursor_invalid' });
      expect(problem(await h.get(`/roles?cursor=${c}`))).toEqual({ status: 400, code: 'cursor_invalid' });
      const list = await h.get('/roles?limit=1');
      expect(problem(await search(`q=design&cursor=${encodeURIComponent(list.body.nextCursor)}`))).toEqual({ status: 400, code: 'cursor_invalid' });
      expect(problem(await search(`q=design&cursor=${c}x`))).toEqual({ status: 400, code: 'cursor_invalid' });
      // The same q with a different limit continues.
      const next = await search(`q=design&limit=5&cursor=${c}`);
      expect(next.body.data.map((x: any) => x.name)).toEqual(RANKED.slice(1, 6));
    });

    it("takes the list's filters, expand and fields; sort and unknown parameters are refused", async () => {
      const builtin = await search('q=man&editable[eq]=false');
      expect(builtin.body.data.map((x: any) => x.name)).toEqual(['manager']);
      expect(sorted(builtin.body.data[0].permissions)).toEqual(sorted([...h.api.permissions]));
      const named = await search('q=design&name[startsWith]=design');
      expect(named.body.data.map((x: any) => x.name)).toEqual(RANKED.slice(0, 3));
      const none = await search(`q=design&createdAt[lt]=${encodeURIComponent('2020-01-01T00:00:00Z')}`);
      expect(none.body.data).toEqual([]);
      const expanded = await search('q=web&expand=createdByActor');
      expect(expanded.body.data[0].createdByActor).toMatchObject({ type: 'human' });
      const fields = await search('q=web&fields[roles]=name');
      expect(fields.body.data).toEqual([{ id: ids.Web, name: 'Web' }]);
      expect(problem(await search('q=web&sort=name'))).toEqual({ status: 400, code: 'invalid_query_param' });
      expect(problem(await search('q=web&color[eq]=x'))).toEqual({ status: 400, code: 'invalid_query_param' });
      expect(problem(await search('q=web&offset=2'))).toEqual({ status: 400, code: 'pagination_param_unknown' });
      expect(problem(await search('q=web&expand=nope'))).toEqual({ status: 400, code: 'expand_unknown_relation' });
    });

    it('needs roles:read: a token without it is 403 permission_denied; a client (no roles:read permission) too', async () => {
      const t = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['tasks:read'] });
      const r = await search('q=design', t.token);
      expect(problem(r)).toEqual({ status: 403, code: 'permission_denied' });
      expect(r.body.missingPermissions).toEqual(['roles:read']);
      const client = await search('q=design', h.a.client.token);
      expect(problem(client)).toEqual({ status: 403, code: 'permission_denied' });
      const roleRead = await h.api.admin.issueToken(h.a.regular.id, { scopes: ['roles:read'] });
      expect((await search('q=design', roleRead.token)).status).toBe(200);
      const expandNoActors = await search('q=design&expand=createdByActor', roleRead.token);
      expect(problem(expandNoActors)).toEqual({ status: 403, code: 'permission_denied' });
      expect(expandNoActors.body.missingPermissions).toEqual(['actors:read']);
    });

    it('other methods on the search path are 405', async () => {
      const r = await h.post('/roles/search', {});
      expect(r.status).toBe(405);
    });
  });
}
