import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../../kit';
import { problem, sorted, expectOk as ok, expectProblem, expectInvalid } from './helpers';
import { during, harnessPerDescribe, ofType } from '../shared';

export function membersSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] Members (docs/not-shown.md: GET /members, GET /members/{id})`, () => {
    let h: Harness;
    let inactiveId: string;
    beforeAll(async () => {
      h = await harness(factory);
      const m = await h.api.admin.addMember(h.a.id, { name: 'Gone Person', role: 'regular' });
      await h.api.admin.setMemberActive(m.id, false);
      inactiveId = m.id;
    });
    afterAll(() => h.close());

    it("lists the workspace's members only", async () => {
      const r = await h.get('/members?limit=200');
      expect(r.status).toBe(200);
      const ids = r.body.data.map((m: any) => m.id);
      expect(sorted(ids)).toEqual(sorted([h.a.owner.id, h.a.regular.id, h.a.client.id, inactiveId]));
      const b = await h.get('/members', { token: h.b.owner.token });
      expect(sorted(b.body.data.map((m: any) => m.id))).toEqual(sorted([h.b.owner.id, h.b.regular.id, h.b.client.id]));
    });

    it('GET /members/{id} returns the documented fields', async () => {
      const r = await h.get(`/members/${h.a.owner.id}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        id: h.a.owner.id,
        name: 'Alpha Owner',
        email: 'owner@alpha.test',
        role: 'owner',
        roleId: h.a.roleIds.owner,
        active: true,
      });
      expect(r.body.userId).toBeTypeOf('string');
      expect(r.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const c = await h.get(`/members/${h.a.client.id}`);
      expect(c.body).toMatchObject({ role: 'client', roleId: h.a.roleIds.client, email: null });
    });

    it("another workspace's member is not found", async () => {
      const r = await h.get(`/members/${h.b.owner.id}`);
      expect(problem(r)).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it('filters role[eq], active[eq], name[contains]', async () => {
      const byRole = await h.get('/members?role[eq]=client');
      expect(byRole.body.data.map((m: any) => m.id)).toEqual([h.a.client.id]);
      const regulars = await h.get('/members?role[eq]=regular');
      expect(sorted(regulars.body.data.map((m: any) => m.id))).toEqual(sorted([h.a.regular.id, inactiveId]));
      const inactive = await h.get('/members?active[eq]=false');
      expect(inactive.body.data.map((m: any) => m.id)).toEqual([inactiveId]);
      expect(inactive.body.data[0].active).toBe(false);
      const active = await h.get('/members?active[eq]=true');
      expect(sorted(active.body.data.map((m: any) => m.id))).toEqual(sorted([h.a.owner.id, h.a.regular.id, h.a.client.id]));
      const named = await h.get('/members?name[contains]=REGULAR');
      expect(named.body.data.map((m: any) => m.id)).toEqual([h.a.regular.id]);
    });

    it('POST /members is 405; name and email are read-only (a PATCH of only them is empty_update)', async () => {
      const r = await h.post('/members', { name: 'New' });
      expect(problem(r)).toEqual({ status: 405, code: 'method_not_allowed' });
      expect(r.headers.allow).toContain('GET');
      const p = await h.patch(`/members/${h.a.regular.id}`, { name: 'Renamed', email: 'x@y.test' });
      expect(problem(p)).toEqual({ status: 400, code: 'empty_update' });
      const again = await h.get(`/members/${h.a.regular.id}`);
      expect(again.body.name).toBe('Alpha Regular');
    });
  });
  membersManagement(factory);
}

const DAYS_31 = 31 * 24 * 60 * 60 * 1000;

/** A member added by the admin with a token of every scope. */
async function person(h: Harness, name: string, role: string): Promise<{ id: string; token: string; userId: string }> {
  const m = await h.api.admin.addMember(h.a.id, { name, role });
  const t = await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] });
  return { id: m.id, token: t.token, userId: m.userId };
}

/** Spec "Errors" token_owner_inactive, and docs/not-shown.md "Members management". */
function membersManagement(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Members management: PATCH /members/{id} changes the role (roleId or role) with manageMembers`, () => {
    const H = harnessPerDescribe(factory);

    it('the owner changes a regular member to client by role name, then back by roleId; the token follows the role at once; member.updated carries the member', async () => {
      const h = H();
      const m = await person(h, 'Role Changer', 'regular');
      expect((await h.post('/projects', { name: 'allowed' }, { token: m.token })).status).toBe(201);
      const { result, events } = await during(h, () => h.patch(`/members/${m.id}`, { role: 'client' }));
      const body = ok(result);
      expect(body).toMatchObject({ id: m.id, role: 'client', roleId: h.a.roleIds.client, active: true, type: 'human' });
      expect(body.updatedByActorType).toBe('human');
      const ev = ofType(events, 'member.updated', m.id);
      expect(ev).toHaveLength(1);
      expect(ev[0].payload.member).toMatchObject({ id: m.id, role: 'client', roleId: h.a.roleIds.client });
      expect(ev[0].triggeredBy).toEqual({ source: 'human', userId: expect.any(String), teamMemberId: h.a.owner.id });
      // A client holds no projects:write: the role is read on every request.
      expectProblem(await h.post('/projects', { name: 'refused' }, { token: m.token }), 403, 'permission_denied');
      const back = ok(await h.patch(`/members/${m.id}`, { roleId: h.a.roleIds.regular }));
      expect(back).toMatchObject({ role: 'regular', roleId: h.a.roleIds.regular });
      expect((await h.post('/projects', { name: 'allowed again' }, { token: m.token })).status).toBe(201);
      expect(ok(await h.get(`/members/${m.id}`)).role).toBe('regular');
    });

    it('a custom role is assignable by name or id; role and roleId naming different roles is 400 mismatch', async () => {
      const h = H();
      const m = await person(h, 'Custom Role Person', 'regular');
      const role = ok(await h.post('/roles', { name: 'Reviewer', permissions: ['tasks:read', 'projects:read'] }), 201);
      const byName = ok(await h.patch(`/members/${m.id}`, { role: 'Reviewer' }));
      expect(byName).toMatchObject({ role: 'Reviewer', roleId: role.id });
      const both = ok(await h.patch(`/members/${m.id}`, { role: 'regular', roleId: h.a.roleIds.regular }));
      expect(both.roleId).toBe(h.a.roleIds.regular);
      expectInvalid(await h.patch(`/members/${m.id}`, { role: 'client', roleId: role.id }), 'role', 'mismatch');
      expect(ok(await h.get(`/members/${m.id}`)).roleId).toBe(h.a.roleIds.regular);
    });

    it('unknown roles are 404 resource_not_found naming the field; another workspace\'s role is unknown; the owner role is 400 not_allowed', async () => {
      const h = H();
      const m = await person(h, 'Bad Role Target', 'regular');
      const a = expectProblem(await h.patch(`/members/${m.id}`, { roleId: 'nosuchrole1' }), 404, 'resource_not_found');
      expect(a.field).toBe('roleId');
      const b = expectProblem(await h.patch(`/members/${m.id}`, { roleId: h.b.roleIds.manager }), 404, 'resource_not_found');
      expect(b.field).toBe('roleId');
      const c = expectProblem(await h.patch(`/members/${m.id}`, { role: 'Nobody Has This' }), 404, 'resource_not_found');
      expect(c.field).toBe('role');
      expectInvalid(await h.patch(`/members/${m.id}`, { role: 'owner' }), 'role', 'not_allowed');
      expectInvalid(await h.patch(`/members/${m.id}`, { roleId: h.a.roleIds.owner }), 'roleId', 'not_allowed');
      expect(ok(await h.get(`/members/${m.id}`)).role).toBe('regular');
    });

    it('bodies are validated: active must be a boolean, role a non-empty string, unknown keys refused, no fields is empty_update', async () => {
      const h = H();
      const m = await person(h, 'Validated', 'regular');
      expectInvalid(await h.patch(`/members/${m.id}`, { active: 'no' }), 'active');
      expectInvalid(await h.patch(`/members/${m.id}`, { role: '  ' }), 'role');
      expectInvalid(await h.patch(`/members/${m.id}`, { roleId: 'bad id!' }), 'roleId');
      expectInvalid(await h.patch(`/members/${m.id}`, { nickname: 'x' }), 'nickname', 'unrecognized_key');
      expectProblem(await h.patch(`/members/${m.id}`, {}), 400, 'empty_update');
      expect(ok(await h.get(`/members/${m.id}`))).toMatchObject({ role: 'regular', active: true });
    });

    it('without manageMembers: a regular member and a client are 403 permission_denied and nothing changes', async () => {
      const h = H();
      const m = await person(h, 'Untouched', 'regular');
      for (const token of [h.a.regular.token, h.a.client.token]) {
        const r = expectProblem(await h.patch(`/members/${m.id}`, { active: false }, { token }), 403, 'permission_denied');
        expect(r.missingPermissions.length).toBeGreaterThan(0);
        expectProblem(await h.del(`/members/${m.id}`, { token }), 403, 'permission_denied');
      }
      expect(ok(await h.get(`/members/${m.id}`)).active).toBe(true);
    });

    it('a custom role holding members:write and manageMembers can manage members but cannot grant a role beyond its own (403 permission_exceeds_caller_grant)', async () => {
      const h = H();
      const perms = h.api.permissions.filter((p) => p !== 'viewAllProjects');
      const role = ok(await h.post('/roles', { name: 'People Lead', permissions: perms }), 201);
      const lead = await person(h, 'Lead', 'People Lead');
      expect(role.id).toBeTypeOf('string');
      const m = await person(h, 'Managed', 'client');
      const r = expectProblem(await h.patch(`/members/${m.id}`, { roleId: h.a.roleIds.manager }, { token: lead.token }), 403, 'permission_exceeds_caller_grant');
      expect(r.exceedingPermissions).toContain('viewAllProjects');
      const ok2 = ok(await h.patch(`/members/${m.id}`, { role: 'regular' }, { token: lead.token }));
      expect(ok2.role).toBe('regular');
      const lacking = ok(await h.post('/roles', { name: 'Members Only', permissions: ['members:write'] }), 201);
      expect(lacking.id).toBeTypeOf('string');
      const weak = await person(h, 'Weak', 'Members Only');
      const w = expectProblem(await h.patch(`/members/${m.id}`, { active: false }, { token: weak.token }), 403, 'permission_denied');
      expect(w.missingPermissions).toContain('manageMembers');
    });

    it('a member whose role grants permissions the caller lacks cannot be deactivated, changed, removed or restored by that caller (403 permission_exceeds_caller_grant with exceedingPermissions); the owner still can', async () => {
      const h = H();
      const perms = h.api.permissions.filter((p) => p !== 'viewAllProjects');
      ok(await h.post('/roles', { name: 'HR', permissions: perms }), 201);
      const hr = await person(h, 'HR person', 'HR');
      const mgr = await person(h, 'Senior Manager', 'manager');
      for (const r of [
        await h.patch(`/members/${mgr.id}`, { active: false }, { token: hr.token }),
        await h.patch(`/members/${mgr.id}`, { role: 'regular' }, { token: hr.token }),
        await h.del(`/members/${mgr.id}`, { token: hr.token }),
      ]) expect(expectProblem(r, 403, 'permission_exceeds_caller_grant').exceedingPermissions).toEqual(['viewAllProjects']);
      expect(ok(await h.get(`/members/${mgr.id}`))).toMatchObject({ role: 'manager', active: true });
      expect((await h.get('/tasks', { token: mgr.token })).status).toBe(200);
      // Removed by the owner, the manager cannot be brought back by HR either.
      expect((await h.del(`/members/${mgr.id}`)).status).toBe(204);
      expectProblem(await h.post(`/members/${mgr.id}/restore`, undefined, { token: hr.token }), 403, 'permission_exceeds_caller_grant');
      expect((await h.get(`/members/${mgr.id}`)).status).toBe(404);
      // Members whose role HR covers: managed as before.
      const reg = await person(h, 'Plain member', 'regular');
      expect(ok(await h.patch(`/members/${reg.id}`, { active: false }, { token: hr.token })).active).toBe(false);
      expect((await h.del(`/members/${reg.id}`, { token: hr.token })).status).toBe(204);
      expect(ok(await h.post(`/members/${reg.id}/restore`, undefined, { token: hr.token })).id).toBe(reg.id);
    });

    it('the workspace owner cannot be demoted, deactivated or removed, and nobody manages their own membership (403 permission_denied)', async () => {
      const h = H();
      const mgr = await person(h, 'A Manager', 'manager');
      for (const r of [
        await h.patch(`/members/${h.a.owner.id}`, { role: 'regular' }, { token: mgr.token }),
        await h.patch(`/members/${h.a.owner.id}`, { active: false }, { token: mgr.token }),
        await h.del(`/members/${h.a.owner.id}`, { token: mgr.token }),
        await h.patch(`/members/${h.a.owner.id}`, { role: 'manager' }),
      ]) {
        const b = expectProblem(r, 403, 'permission_denied');
        expect(b.missingPermissions).toEqual([]);
      }
      for (const r of [
        await h.patch(`/members/${mgr.id}`, { active: false }, { token: mgr.token }),
        await h.patch(`/members/${mgr.id}`, { role: 'regular' }, { token: mgr.token }),
        await h.del(`/members/${mgr.id}`, { token: mgr.token }),
      ]) expect(expectProblem(r, 403, 'permission_denied').reason).toBe('self');
      expect(ok(await h.get(`/members/${h.a.owner.id}`))).toMatchObject({ role: 'owner', active: true });
      expect(ok(await h.get(`/members/${mgr.id}`))).toMatchObject({ role: 'manager', active: true });
      // A manager manages the other members.
      expect(ok(await h.patch(`/members/${h.a.client.id}`, { role: 'client' }, { token: mgr.token })).role).toBe('client');
    });

    it('the route table names the scope and manageMembers for PATCH, DELETE and restore of members (Authentication rule 5)', async () => {
      const routes = H().api.routes().filter((r) => r.path.startsWith('/members'));
      const find = (method: string, path: string) => routes.find((r) => r.method === method && r.path === path);
      expect(find('PATCH', '/members/{id}')).toMatchObject({ scope: 'members:write', permissions: expect.arrayContaining(['manageMembers']) });
      expect(find('DELETE', '/members/{id}')).toMatchObject({ scope: 'members:delete', permissions: expect.arrayContaining(['manageMembers']) });
      expect(find('POST', '/members/{id}/restore')).toMatchObject({ scope: 'members:delete', permissions: expect.arrayContaining(['manageMembers']) });
      expect(find('POST', '/members')).toBeUndefined();
    });

    it("another workspace's member is 404 for PATCH and DELETE", async () => {
      const h = H();
      expectProblem(await h.patch(`/members/${h.b.regular.id}`, { active: false }), 404, 'resource_not_found');
      expectProblem(await h.del(`/members/${h.b.regular.id}`), 404, 'resource_not_found');
      expect(ok(await h.get(`/members/${h.b.regular.id}`, { token: h.b.owner.token })).active).toBe(true);
    });
  });

  describe(`[${factory.name}] v3 Members management: a deactivated or removed member's tokens answer 401 token_owner_inactive (spec "Errors")`, () => {
    const H = harnessPerDescribe(factory);

    it('PATCH active false deactivates: 401 token_owner_inactive on every request; active true brings the same token back', async () => {
      const h = H();
      const m = await person(h, 'Deactivated', 'regular');
      expect((await h.get('/projects', { token: m.token })).status).toBe(200);
      const { result, events } = await during(h, () => h.patch(`/members/${m.id}`, { active: false }));
      expect(ok(result).active).toBe(false);
      expect(ofType(events, 'member.updated', m.id)).toHaveLength(1);
      expectProblem(await h.get('/projects', { token: m.token }), 401, 'token_owner_inactive');
      expectProblem(await h.post('/projects', { name: 'x' }, { token: m.token }), 401, 'token_owner_inactive');
      expect(ok(await h.get('/members?active[eq]=false')).data.map((x: any) => x.id)).toContain(m.id);
      ok(await h.patch(`/members/${m.id}`, { active: true }));
      expect((await h.get('/projects', { token: m.token })).status).toBe(200);
    });

    it('DELETE removes (204, member.removed): gone from GET and lists, listed by purgeAt[notNull], tokens 401 token_owner_inactive; restore (member.restored) brings it all back', async () => {
      const h = H();
      const m = await person(h, 'Removed', 'regular');
      const p = await h.project({ name: 'Removal P', members: [m.id] });
      const t = await h.task(p.id, { name: 'assigned', assignees: [m.id] });
      const del = await during(h, () => h.del(`/members/${m.id}`));
      expect(del.result.status).toBe(204);
      const removed = ofType(del.events, 'member.removed', m.id);
      expect(removed).toHaveLength(1);
      expect(removed[0].payload.member.purgeAt).toBeTypeOf('string');
      expect(removed[0].payload.member.deletedById).toBe(h.a.owner.id);
      expectProblem(await h.get(`/members/${m.id}`), 404, 'resource_not_found');
      expect(ok(await h.get('/members?limit=200')).data.map((x: any) => x.id)).not.toContain(m.id);
      expect(ok(await h.get('/members?purgeAt[notNull]=true')).data.map((x: any) => x.id)).toEqual([m.id]);
      expectProblem(await h.get('/projects', { token: m.token }), 401, 'token_owner_inactive');
      // A removed member cannot be newly assigned; their existing assignment is kept while they are in the trash.
      expectProblem(await h.post('/tasks', { name: 'new', projectId: p.id, assignees: [m.id] }), 404, 'm2m_target_not_found');
      expect(ok(await h.get(`/tasks/${t.id}`)).assignees).toEqual([m.id]);
      const back = await during(h, () => h.post(`/members/${m.id}/restore`));
      expect(ok(back.result)).toMatchObject({ id: m.id, purgeAt: null, active: true });
      expect(ofType(back.events, 'member.restored', m.id)).toHaveLength(1);
      expect((await h.get('/projects', { token: m.token })).status).toBe(200);
      expect(ok(await h.get(`/tasks/${t.id}`)).assignees).toEqual([m.id]);
    });

    it('30 days after removal the member is purged (member.force_deleted): their assignments go and their tokens answer 401 invalid_token', async () => {
      const h = H();
      const m = await person(h, 'Purged', 'regular');
      const p = await h.project({ name: 'Purge P', members: [m.id] });
      const t = await h.task(p.id, { name: 'assigned', assignees: [m.id, h.a.owner.id] });
      expect((await h.del(`/members/${m.id}`)).status).toBe(204);
      h.clock.advance(DAYS_31);
      const { events } = await during(h, () => h.api.jobs.purge());
      expect(ofType(events, 'member.force_deleted', m.id)).toHaveLength(1);
      expectProblem(await h.post(`/members/${m.id}/restore`), 404, 'resource_not_found');
      expect(ok(await h.get(`/tasks/${t.id}`)).assignees).toEqual([h.a.owner.id]);
      expectProblem(await h.get('/projects', { token: m.token }), 401, 'invalid_token');
    });

    it('the purge takes the member\'s private rows with it (favorites, favorite folders, reminders, private documents — trashed ones too — and private dashboards; each with its removed or force_deleted event); their shared rows and other members\' stay', async () => {
      const h = H();
      const m = await person(h, 'Purged with rows', 'regular');
      const p = await h.project({ name: 'Purge rows P', members: [m.id, h.a.regular.id] });
      const t = await h.task(p.id, { name: 'favorited' });
      const as = { token: m.token };
      const folder = ok(await h.post('/favorite-folders', { name: 'Mine' }, as), 201);
      const fav = ok(await h.post('/favorites', { targetType: 'task', targetId: t.id, favoriteFolderId: folder.id }, as), 201);
      const reminder = ok(await h.post('/reminders', { taskId: t.id, date: new Date(h.clock.now() + 3_600_000).toISOString() }, as), 201);
      const privateDoc = ok(await h.post('/documents', { title: 'Private notes', projectId: p.id, accessType: 'private' }, as), 201);
      const trashedDoc = ok(await h.post('/documents', { title: 'Private and trashed', projectId: p.id, accessType: 'private' }, as), 201);
      expect((await h.del(`/documents/${trashedDoc.id}`, as)).status).toBe(204);
      const sharedDoc = ok(await h.post('/documents', { title: 'For the team', projectId: p.id }, as), 201);
      const privateBoard = ok(await h.post('/project-dashboards', { name: 'My board', projectId: p.id, isShared: false }, as), 201);
      const sharedBoard = ok(await h.post('/project-dashboards', { name: 'Team board', projectId: p.id }, as), 201);
      const otherFav = ok(await h.post('/favorites', { targetType: 'task', targetId: t.id }, { token: h.a.regular.token }), 201);
      const otherReminder = ok(await h.post('/reminders', { taskId: t.id, date: new Date(h.clock.now() + 3_600_000).toISOString() }, { token: h.a.regular.token }), 201);
      expect((await h.del(`/members/${m.id}`)).status).toBe(204);
      // In the trash (restorable) the rows stay.
      const db = h.api.store.db;
      const rowsOf = async (name: string, field: string, memberId: string) => {
        const res = h.api.registry.get(name);
        return (await db.selectFrom(res.table).select('id').where(res.columnOf[field]!, '=', memberId).execute()).map((r: any) => r.id).sort();
      };
      expect(await rowsOf('favorite', 'createdById', m.id)).toEqual([fav.id]);
      expect(await rowsOf('reminder', 'createdById', m.id)).toEqual([reminder.id]);
      expect(await rowsOf('document', 'createdById', m.id)).toEqual([privateDoc.id, trashedDoc.id, sharedDoc.id].sort());
      h.clock.advance(DAYS_31);
      const { events } = await during(h, () => h.api.jobs.purge());
      expect(ofType(events, 'member.force_deleted', m.id)).toHaveLength(1);
      expect(ofType(events, 'favorite.removed', fav.id)).toHaveLength(1);
      expect(ofType(events, 'favoriteFolder.removed', folder.id)).toHaveLength(1);
      // Favorites go before their folders: the folder's removal has no favorite left to unfile (no favorite.updated).
      expect(ofType(events, 'favorite.updated', fav.id)).toHaveLength(0);
      expect(ofType(events, 'reminder.removed', reminder.id)).toHaveLength(1);
      expect(ofType(events, 'document.force_deleted', privateDoc.id)).toHaveLength(1);
      // The trashed private document would have been purged itself at the same time: one force_deleted, not two.
      expect(ofType(events, 'document.force_deleted', trashedDoc.id)).toHaveLength(1);
      expect(ofType(events, 'projectDashboard.removed', privateBoard.id)).toHaveLength(1);
      expect(await rowsOf('favorite', 'createdById', m.id)).toEqual([]);
      expect(await rowsOf('favoriteFolder', 'createdById', m.id)).toEqual([]);
      expect(await rowsOf('reminder', 'createdById', m.id)).toEqual([]);
      expect(await rowsOf('document', 'createdById', m.id)).toEqual([sharedDoc.id]);
      expect(await rowsOf('projectDashboard', 'createdById', m.id)).toEqual([sharedBoard.id]);
      // Shared rows stay (they name the member in createdById, which expands to null); other members' rows stay.
      expect(ok(await h.get(`/documents/${sharedDoc.id}`)).id).toBe(sharedDoc.id);
      expect(ok(await h.get(`/project-dashboards/${sharedBoard.id}`)).id).toBe(sharedBoard.id);
      expect(ofType(events, 'document.force_deleted', sharedDoc.id)).toEqual([]);
      expect(ok(await h.get(`/favorites/${otherFav.id}`, { token: h.a.regular.token })).id).toBe(otherFav.id);
      expect(ok(await h.get(`/reminders/${otherReminder.id}`, { token: h.a.regular.token })).id).toBe(otherReminder.id);
    });
  });

  describe(`[${factory.name}] v3 Members management: a member who can no longer act (deactivated, removed, purged) loses their presence status; their pending handoffs are declined (to them) or withdrawn (from them)`, () => {
    const H = harnessPerDescribe(factory);

    /** A member with a presence status, a pending handoff offered to them, a pending one they sent, and one they already answered. */
    async function leaver(h: Harness, name: string) {
      const m = await person(h, name, 'regular');
      const p = await h.project({ name: `${name} P`, members: [m.id, h.a.regular.id] });
      const t = await h.task(p.id, { assignees: [h.a.regular.id] });
      const status = ok(await h.post('/presence-statuses', { text: 'On leave', emoji: '🌴' }, { token: m.token }), 201);
      const toThem = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: m.id }, { token: h.a.regular.token }), 201);
      const fromThem = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: h.a.regular.id, note: 'yours now' }, { token: m.token }), 201);
      const answered = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: m.id }), 201);
      const declined = ok(await h.patch(`/task-handoffs/${answered.id}`, { status: 'declined' }, { token: m.token }));
      const otherStatus = (await h.get(`/presence-statuses?memberId[eq]=${h.a.regular.id}`)).body.data[0]
        ?? ok(await h.post('/presence-statuses', { text: 'Here' }, { token: h.a.regular.token }), 201);
      h.clock.advance(60_000);
      return { m, t, status, toThem, fromThem, declined, otherStatus };
    }

    /** What leaving did: status gone (presenceStatus.removed), the offer to them declined (taskHandoff.updated), theirs withdrawn (taskHandoff.removed), the rest untouched. */
    async function expectReleased(h: Harness, r: Awaited<ReturnType<typeof leaver>>, events: any[], actorType: string) {
      expect(ofType(events, 'presenceStatus.removed', r.status.id)).toHaveLength(1);
      expectProblem(await h.get(`/presence-statuses/${r.status.id}`), 404, 'resource_not_found');
      const declined = ok(await h.get(`/task-handoffs/${r.toThem.id}`));
      expect(declined).toMatchObject({ status: 'declined', respondedAt: new Date(h.clock.now()).toISOString(), updatedByActorType: actorType });
      const upd = ofType(events, 'taskHandoff.updated', r.toThem.id);
      expect(upd).toHaveLength(1);
      expect(upd[0].payload.taskHandoff).toMatchObject({ status: 'declined', respondedAt: declined.respondedAt });
      expect(ofType(events, 'taskHandoff.removed', r.fromThem.id)).toHaveLength(1);
      expectProblem(await h.get(`/task-handoffs/${r.fromThem.id}`), 404, 'resource_not_found');
      // An answered handoff, the task and other members' statuses are left alone.
      expect(ok(await h.get(`/task-handoffs/${r.declined.id}`))).toEqual(r.declined);
      expect(ofType(events, 'taskHandoff.updated', r.declined.id)).toEqual([]);
      expect(ok(await h.get(`/tasks/${r.t.id}`)).assignees).toEqual([h.a.regular.id]);
      expect(ok(await h.get(`/presence-statuses/${r.otherStatus.id}`)).id).toBe(r.otherStatus.id);
      return declined;
    }

    it('PATCH /members/{id} {active: false}: their status is deleted and their pending handoffs settled, in the same request (triggered by the caller); reactivating brings nothing back', async () => {
      const h = H();
      const r = await leaver(h, 'Deactivated leaver');
      const { result, events } = await during(h, () => h.patch(`/members/${r.m.id}`, { active: false }));
      expect(ok(result).active).toBe(false);
      await expectReleased(h, r, events, 'human');
      for (const e of [...ofType(events, 'presenceStatus.removed'), ...ofType(events, 'taskHandoff.updated'), ...ofType(events, 'taskHandoff.removed')]) {
        expect(e.triggeredBy).toMatchObject({ source: 'human', teamMemberId: h.a.owner.id });
      }
      ok(await h.patch(`/members/${r.m.id}`, { active: true }));
      expect(ok(await h.get(`/presence-statuses?memberId[eq]=${r.m.id}`)).data).toEqual([]);
      expect(ok(await h.get(`/task-handoffs/${r.toThem.id}`)).status).toBe('declined');
      // A change that is no deactivation (a role change) settles nothing.
      const s = ok(await h.post('/presence-statuses', { text: 'Back' }, { token: r.m.token }), 201);
      const { events: roleEvents } = await during(h, async () => ok(await h.patch(`/members/${r.m.id}`, { role: 'client' })));
      expect(ofType(roleEvents, 'presenceStatus.removed')).toEqual([]);
      expect(ok(await h.get(`/presence-statuses/${s.id}`)).id).toBe(s.id);
    });

    it('api.admin.setMemberActive(id, false) does the same, triggered by the system; the declined handoff is stamped by the workspace\'s system actor (type systemDefault)', async () => {
      const h = H();
      const r = await leaver(h, 'Admin-deactivated leaver');
      const { events } = await during(h, () => h.api.admin.setMemberActive(r.m.id, false));
      const declined = await expectReleased(h, r, events, 'systemDefault');
      for (const e of ofType(events, 'taskHandoff.updated')) expect(e.triggeredBy).toEqual({ source: 'system' });
      expect(ok(await h.get(`/actors/${declined.updatedByActorId}`))).toMatchObject({ type: 'systemDefault', displayName: 'System', memberId: null, agentId: null });
      expect(ofType(events, 'member.updated', r.m.id)).toHaveLength(1);
    });

    it('DELETE /members/{id} (removal) does the same; restoring the member brings nothing back', async () => {
      const h = H();
      const r = await leaver(h, 'Removed leaver');
      const { result, events } = await during(h, () => h.del(`/members/${r.m.id}`));
      expect(result.status).toBe(204);
      await expectReleased(h, r, events, 'human');
      ok(await h.post(`/members/${r.m.id}/restore`));
      expect(ok(await h.get(`/presence-statuses?memberId[eq]=${r.m.id}`)).data).toEqual([]);
      expect(ok(await h.get(`/task-handoffs/${r.toThem.id}`)).status).toBe('declined');
    });

    it('a pending handoff left over at purge time (written straight to the store) is settled by the purge, stamped by the system actor', async () => {
      const h = H();
      const r = await leaver(h, 'Purged leaver');
      expect((await h.del(`/members/${r.m.id}`)).status).toBe(204);
      // Rows a removal of an earlier release left behind: put a status and both handoffs back as they were.
      const db = h.api.store.db;
      const handoffs = h.api.registry.get('taskHandoff');
      await db.updateTable(handoffs.table).set({ [handoffs.columnOf.status!]: 'pending', [handoffs.columnOf.respondedAt!]: null }).where('id', '=', r.toThem.id).execute();
      const kept = await db.selectFrom(handoffs.table).selectAll().where('id', '=', r.toThem.id).executeTakeFirstOrThrow();
      await db.insertInto(handoffs.table).values({ ...kept, id: r.fromThem.id, [handoffs.columnOf.fromMemberId!]: r.m.id, [handoffs.columnOf.toMemberId!]: h.a.regular.id }).execute();
      const statuses = h.api.registry.get('presenceStatus');
      const other = await db.selectFrom(statuses.table).selectAll().where('id', '=', r.otherStatus.id).executeTakeFirstOrThrow();
      await db.insertInto(statuses.table).values({ ...other, id: r.status.id, [statuses.columnOf.memberId!]: r.m.id }).execute();
      h.clock.advance(DAYS_31);
      const { events } = await during(h, () => h.api.jobs.purge());
      expect(ofType(events, 'member.force_deleted', r.m.id)).toHaveLength(1);
      await expectReleased(h, r, events, 'systemDefault');
    });
  });

  describe(`[${factory.name}] v3 Events lifecycle member.*: member.created when the admin adds a member (triggeredBy system)`, () => {
    const H = harnessPerDescribe(factory);

    it('api.admin.addMember and setMemberActive emit member.created and member.updated, triggered by the system', async () => {
      const h = H();
      const { result: m, events } = await during(h, () => h.api.admin.addMember(h.a.id, { name: 'Newcomer', email: 'new@alpha.test' }));
      const created = ofType(events, 'member.created', m.id);
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ teamId: h.a.id, aggregateType: 'member', projectId: null, triggeredBy: { source: 'system' } });
      expect(created[0].payload.member).toMatchObject({ id: m.id, name: 'Newcomer', email: 'new@alpha.test', role: 'regular', active: true, type: 'human' });
      const off = await during(h, () => h.api.admin.setMemberActive(m.id, false));
      const upd = ofType(off.events, 'member.updated', m.id);
      expect(upd).toHaveLength(1);
      expect(upd[0].payload.member.active).toBe(false);
      // Workspace B's events are its own.
      expect(events.every((e) => e.teamId === h.a.id)).toBe(true);
    });
  });
}
