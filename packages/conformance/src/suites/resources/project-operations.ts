import { describe, it, expect } from 'vitest';
import type { Harness, Member, StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid, sorted } from './helpers';

/**
 * The project operations (spec "Events": project.addMember,
 * project.removeMember, project.transfer; spec "Project": ownerId changes
 * only by the transfer operation, members, discussionChatId). Paths, bodies
 * and the rules the spec leaves open are docs/not-shown.md "Project operations".
 */

const ALL = ['read', 'write', 'delete'];

async function newMember(h: Harness, name: string, role = 'regular'): Promise<Member> {
  const m = await h.api.admin.addMember(h.a.id, { name, role });
  const t = await h.api.admin.issueToken(m.id, { scopes: ALL });
  return { id: m.id, token: t.token };
}

/** The discussion chat's member entries as `token` sees them (null: not a member of it). */
async function chatEntries(h: Harness, projectId: string, token: string): Promise<Array<{ memberId: string; owner: boolean }> | null> {
  const p = ok(await h.get(`/projects/${projectId}?expand=discussionChat.members`, { token }));
  return p.discussionChat === null ? null : p.discussionChat.members;
}

export function projectOperationsSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Project operations: add member (POST /projects/{id}/add-member, event project.addMember; members; discussion chat follows the roster)`, () => {
    const H = harnessPerDescribe(factory);

    it('adds the member to the roster: 200 with the project, updatedAt bumped; the member now opens the project and its discussion chat', async () => {
      const h = H();
      const m = await newMember(h, 'Joiner');
      const p = await h.project({ name: 'Add one' });
      problem(await h.get(`/projects/${p.id}`, { token: m.token }), 403, 'project_access_denied');
      const { result, events } = await during(h, () => h.post(`/projects/${p.id}/add-member`, { memberId: m.id }));
      const body = ok(result);
      expect(body.id).toBe(p.id);
      expect(body.members).toEqual([m.id]);
      expect(Date.parse(body.updatedAt)).toBeGreaterThan(Date.parse(p.updatedAt));
      expect(ok(await h.get(`/projects/${p.id}`))).toMatchObject({ members: [m.id], updatedAt: body.updatedAt });
      expect(ok(await h.get(`/projects/${p.id}`, { token: m.token })).id).toBe(p.id);
      const entries = await chatEntries(h, p.id, m.token);
      expect(entries?.map((e) => e.memberId)).toContain(m.id);
      // The operation event carries the answer under `project`; the roster's membership event comes with it.
      const op = ofType(events, 'project.addMember', p.id);
      expect(op).toHaveLength(1);
      expect(op[0].payload.project).toEqual(body);
      expect(op[0].payload.memberId).toBe(m.id);
      expect(op[0].projectId).toBe(p.id);
      const added = ofType(events, 'project.members.added', p.id);
      expect(added.map((e) => e.payload)).toEqual([{ parentId: p.id, relatedId: m.id, relation: 'members' }]);
    });

    it('adding a member already on the roster changes nothing: 200, same updatedAt, no event', async () => {
      const h = H();
      const p = await h.project({ name: 'Already in', members: [h.a.regular.id] });
      const { result, events } = await during(h, () => h.post(`/projects/${p.id}/add-member`, { memberId: h.a.regular.id }));
      const body = ok(result);
      expect(body.members).toEqual([h.a.regular.id]);
      expect(body.updatedAt).toBe(p.updatedAt);
      expect(events).toEqual([]);
    });

    it('the body is validated exactly: memberId required, an id string, no other key', async () => {
      const h = H();
      const p = await h.project({ name: 'Strict add' });
      invalid(await h.post(`/projects/${p.id}/add-member`, {}), 'memberId', 'required');
      invalid(await h.post(`/projects/${p.id}/add-member`), 'memberId', 'required');
      invalid(await h.post(`/projects/${p.id}/add-member`, { memberId: 42 }), 'memberId');
      invalid(await h.post(`/projects/${p.id}/add-member`, { memberId: 'bad id!?' }), 'memberId');
      invalid(await h.post(`/projects/${p.id}/add-member`, { memberId: h.a.regular.id, role: 'x' }), 'role', 'unrecognized_key');
      invalid(await h.post(`/projects/${p.id}/add-member`, { memberIds: [h.a.regular.id] }), 'memberIds', 'unrecognized_key');
      invalid(await h.post(`/projects/${p.id}/add-member`, [h.a.regular.id]), '');
      expect(ok(await h.get(`/projects/${p.id}`)).members).toEqual([]);
    });

    it('a memberId that is no member of this workspace (another workspace\'s too) → 404 resource_not_found naming memberId; nothing changes', async () => {
      const h = H();
      const p = await h.project({ name: 'Unknown member' });
      const r = problem(await h.post(`/projects/${p.id}/add-member`, { memberId: 'nosuchmember0000' }), 404, 'resource_not_found');
      expect(r.field).toBe('memberId');
      const cross = problem(await h.post(`/projects/${p.id}/add-member`, { memberId: h.b.regular.id }), 404, 'resource_not_found');
      expect(cross.field).toBe('memberId');
      expect(ok(await h.get(`/projects/${p.id}`)).members).toEqual([]);
    });

    it('a deactivated member cannot be added (400 validation_failed inactive_member) but can be removed', async () => {
      const h = H();
      const gone = await newMember(h, 'Deactivated');
      const kept = await newMember(h, 'Deactivated later');
      const p = await h.project({ name: 'Inactive', members: [kept.id] });
      await h.api.admin.setMemberActive(gone.id, false);
      await h.api.admin.setMemberActive(kept.id, false);
      invalid(await h.post(`/projects/${p.id}/add-member`, { memberId: gone.id }), 'memberId', 'inactive_member');
      expect(ok(await h.post(`/projects/${p.id}/remove-member`, { memberId: kept.id })).members).toEqual([]);
    });

    it('who may: 404 for an unknown or another workspace\'s project; 403 project_access_denied for a project the caller cannot open; 403 permission_denied without projects:write (client role, read-only token)', async () => {
      const h = H();
      const p = await h.project({ name: 'Guarded' });
      problem(await h.post('/projects/nosuchproject00/add-member', { memberId: h.a.regular.id }), 404, 'resource_not_found');
      const pb = await h.project({ name: 'Beta side' }, h.b.owner.token);
      problem(await h.post(`/projects/${pb.id}/add-member`, { memberId: h.a.regular.id }), 404, 'resource_not_found');
      problem(await h.post(`/projects/${p.id}/add-member`, { memberId: h.a.regular.id }, { token: h.a.regular.token }), 403, 'project_access_denied');
      const withClient = await h.project({ name: 'Guest inside', members: [h.a.client.id] });
      problem(await h.post(`/projects/${withClient.id}/add-member`, { memberId: h.a.regular.id }, { token: h.a.client.token }), 403, 'permission_denied');
      const readOnly = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['read'] });
      const denied = problem(await h.post(`/projects/${p.id}/add-member`, { memberId: h.a.regular.id }, { token: readOnly.token }), 403, 'permission_denied');
      expect(denied.missingPermissions).toEqual(['projects:write']);
      expect(ok(await h.get(`/projects/${p.id}`)).members).toEqual([]);
      expect(ok(await h.get(`/projects/${withClient.id}`)).members).toEqual([h.a.client.id]);
      // A regular member who opens the project may add to its roster.
      const open = await h.project({ name: 'Regular adds', members: [h.a.regular.id] });
      const m = await newMember(h, 'Added by regular');
      expect(sorted(ok(await h.post(`/projects/${open.id}/add-member`, { memberId: m.id }, { token: h.a.regular.token })).members)).toEqual(sorted([h.a.regular.id, m.id]));
    });

    it('the operation is in the route table with the projects:write scope, as are remove-member and transfer', async () => {
      const rows = H().api.routes().filter((r) => r.path.startsWith('/projects/{id}/'));
      for (const op of ['add-member', 'remove-member', 'transfer']) {
        expect(rows.find((r) => r.method === 'POST' && r.path === `/projects/{id}/${op}`), op).toMatchObject({ scope: 'projects:write' });
      }
    });
  });

  describe(`[${factory.name}] v3 Project operations: remove member (POST /projects/{id}/remove-member, event project.removeMember; the owner cannot be removed)`, () => {
    const H = harnessPerDescribe(factory);

    it('takes the member off the roster: 200, events project.removeMember and project.members.removed; they lose the project and its discussion chat', async () => {
      const h = H();
      const m = await newMember(h, 'Leaver');
      const p = await h.project({ name: 'Remove one', members: [m.id, h.a.regular.id] });
      expect((await chatEntries(h, p.id, m.token))?.map((e) => e.memberId)).toContain(m.id);
      const { result, events } = await during(h, () => h.post(`/projects/${p.id}/remove-member`, { memberId: m.id }));
      const body = ok(result);
      expect(body.members).toEqual([h.a.regular.id]);
      expect(Date.parse(body.updatedAt)).toBeGreaterThan(Date.parse(p.updatedAt));
      problem(await h.get(`/projects/${p.id}`, { token: m.token }), 403, 'project_access_denied');
      expect((await chatEntries(h, p.id, h.a.regular.token))?.map((e) => e.memberId)).not.toContain(m.id);
      const op = ofType(events, 'project.removeMember', p.id);
      expect(op).toHaveLength(1);
      expect(op[0].payload.project).toEqual(body);
      expect(op[0].payload.memberId).toBe(m.id);
      expect(ofType(events, 'project.members.removed', p.id).map((e) => e.payload.relatedId)).toEqual([m.id]);
    });

    it('a removed (trashed) member can be taken off the roster too, as with DELETE /projects/{id}/members: 200 with project.removeMember; restored, they are no longer on it', async () => {
      const h = H();
      const m = await newMember(h, 'Trashed leaver');
      const p = await h.project({ name: 'Remove trashed', members: [m.id, h.a.regular.id] });
      expect((await h.del(`/members/${m.id}`)).status).toBe(204);
      const { result, events } = await during(h, () => h.post(`/projects/${p.id}/remove-member`, { memberId: m.id }));
      ok(result);
      expect(ofType(events, 'project.removeMember', p.id)).toHaveLength(1);
      expect(ofType(events, 'project.members.removed', p.id).map((e) => e.payload.relatedId)).toEqual([m.id]);
      expect(ok(await h.post(`/members/${m.id}/restore`)).id).toBe(m.id);
      expect(ok(await h.get(`/projects/${p.id}`)).members).toEqual([h.a.regular.id]);
    });

    it('a member who is not on the roster: 200, nothing changes, no event', async () => {
      const h = H();
      const p = await h.project({ name: 'Not there', members: [h.a.regular.id] });
      const { result, events } = await during(h, () => h.post(`/projects/${p.id}/remove-member`, { memberId: h.a.client.id }));
      expect(ok(result)).toMatchObject({ members: [h.a.regular.id], updatedAt: p.updatedAt });
      expect(events).toEqual([]);
    });

    it('the project owner cannot be removed: 409 conflict naming memberId, nothing changes, no event (even when also on the roster)', async () => {
      const h = H();
      const p = await h.project({ name: 'Owner stays', members: [h.a.owner.id, h.a.regular.id] });
      const { result, events } = await during(h, () => h.post(`/projects/${p.id}/remove-member`, { memberId: h.a.owner.id }));
      expect(problem(result, 409, 'conflict').field).toBe('memberId');
      expect(events).toEqual([]);
      const now = ok(await h.get(`/projects/${p.id}`));
      expect(sorted(now.members)).toEqual(sorted([h.a.owner.id, h.a.regular.id]));
      expect(now.ownerId).toBe(h.a.owner.id);
      expect(now.updatedAt).toBe(p.updatedAt);
    });

    it('the body is validated exactly; unknown members are 404 naming memberId', async () => {
      const h = H();
      const p = await h.project({ name: 'Strict remove', members: [h.a.regular.id] });
      invalid(await h.post(`/projects/${p.id}/remove-member`, {}), 'memberId', 'required');
      invalid(await h.post(`/projects/${p.id}/remove-member`, { memberId: h.a.regular.id, now: true }), 'now', 'unrecognized_key');
      invalid(await h.post(`/projects/${p.id}/remove-member`, { memberId: null }), 'memberId');
      expect(problem(await h.post(`/projects/${p.id}/remove-member`, { memberId: h.b.owner.id }), 404, 'resource_not_found').field).toBe('memberId');
      expect(ok(await h.get(`/projects/${p.id}`)).members).toEqual([h.a.regular.id]);
    });
  });

  describe(`[${factory.name}] v3 Project operations: transfer (POST /projects/{id}/transfer; ownerId changed only by the transfer operation, event project.transfer)`, () => {
    const H = harnessPerDescribe(factory);

    it('the owner hands the project to a member: ownerId changes, both stay on the roster, the discussion chat gets its new owner; project.transfer carries the answer', async () => {
      const h = H();
      const p = await h.project({ name: 'Handover' });
      const { result, events } = await during(h, () => h.post(`/projects/${p.id}/transfer`, { ownerId: h.a.regular.id }));
      const body = ok(result);
      expect(body.ownerId).toBe(h.a.regular.id);
      expect(sorted(body.members)).toEqual(sorted([h.a.owner.id, h.a.regular.id]));
      expect(Date.parse(body.updatedAt)).toBeGreaterThan(Date.parse(p.updatedAt));
      expect(ok(await h.get(`/projects/${p.id}?expand=owner`)).owner.id).toBe(h.a.regular.id);
      const op = ofType(events, 'project.transfer', p.id);
      expect(op).toHaveLength(1);
      expect(op[0].payload.project).toEqual(body);
      expect(op[0].payload.previousOwnerId).toBe(h.a.owner.id);
      expect(sorted(ofType(events, 'project.members.added', p.id).map((e) => e.payload.relatedId))).toEqual(sorted([h.a.owner.id, h.a.regular.id]));
      const entries = await chatEntries(h, p.id, h.a.regular.token);
      expect(entries?.find((e) => e.memberId === h.a.regular.id)?.owner).toBe(true);
      expect(entries?.find((e) => e.memberId === h.a.owner.id)?.owner).toBe(false);
    });

    it('ownerId changes only this way: PATCH ownerId is ignored (alone: empty_update), create ignores it', async () => {
      const h = H();
      const p = await h.project({ name: 'Fixed owner', ownerId: h.a.regular.id });
      expect(p.ownerId).toBe(h.a.owner.id);
      problem(await h.patch(`/projects/${p.id}`, { ownerId: h.a.regular.id }), 400, 'empty_update');
      expect(ok(await h.patch(`/projects/${p.id}`, { ownerId: h.a.regular.id, description: 'x' })).ownerId).toBe(h.a.owner.id);
      expect(ok(await h.get(`/projects/${p.id}`)).ownerId).toBe(h.a.owner.id);
    });

    it('who may transfer: the project owner or a workspace owner/manager (viewAllProjects); another member of the project gets 403 permission_denied', async () => {
      const h = H();
      const p = await h.project({ name: 'Who transfers', members: [h.a.regular.id] });
      const m = await newMember(h, 'Next owner');
      const denied = problem(await h.post(`/projects/${p.id}/transfer`, { ownerId: h.a.regular.id }, { token: h.a.regular.token }), 403, 'permission_denied');
      expect(denied.missingPermissions).toEqual(['viewAllProjects']);
      expect(ok(await h.get(`/projects/${p.id}`)).ownerId).toBe(h.a.owner.id);
      // Now the regular member owns it and may hand it on.
      ok(await h.post(`/projects/${p.id}/transfer`, { ownerId: h.a.regular.id }));
      expect(ok(await h.post(`/projects/${p.id}/transfer`, { ownerId: m.id }, { token: h.a.regular.token })).ownerId).toBe(m.id);
      // The workspace owner (viewAllProjects) transfers a project they do not own.
      expect(ok(await h.post(`/projects/${p.id}/transfer`, { ownerId: h.a.regular.id })).ownerId).toBe(h.a.regular.id);
      const manager = await newMember(h, 'Manager', 'manager');
      expect(ok(await h.post(`/projects/${p.id}/transfer`, { ownerId: m.id }, { token: manager.token })).ownerId).toBe(m.id);
    });

    it('the new owner must be an active, non-guest member of this workspace; the body is validated exactly', async () => {
      const h = H();
      const p = await h.project({ name: 'Strict transfer' });
      invalid(await h.post(`/projects/${p.id}/transfer`, { ownerId: h.a.client.id }), 'ownerId', 'guest_owner');
      expect(problem(await h.post(`/projects/${p.id}/transfer`, { ownerId: 'nosuchmember0000' }), 404, 'resource_not_found').field).toBe('ownerId');
      expect(problem(await h.post(`/projects/${p.id}/transfer`, { ownerId: h.b.owner.id }), 404, 'resource_not_found').field).toBe('ownerId');
      invalid(await h.post(`/projects/${p.id}/transfer`, {}), 'ownerId', 'required');
      invalid(await h.post(`/projects/${p.id}/transfer`, { ownerId: h.a.regular.id, memberId: h.a.regular.id }), 'memberId', 'unrecognized_key');
      invalid(await h.post(`/projects/${p.id}/transfer`, { ownerId: [h.a.regular.id] }), 'ownerId');
      const now = ok(await h.get(`/projects/${p.id}`));
      expect(now.ownerId).toBe(h.a.owner.id);
      expect(now.members).toEqual([]);
    });

    it('transferring to the current owner changes nothing and emits nothing', async () => {
      const h = H();
      const p = await h.project({ name: 'Same owner' });
      const { result, events } = await during(h, () => h.post(`/projects/${p.id}/transfer`, { ownerId: h.a.owner.id }));
      expect(ok(result)).toMatchObject({ ownerId: h.a.owner.id, updatedAt: p.updatedAt, members: [] });
      expect(events).toEqual([]);
    });

    it('after a transfer the previous owner can be removed and the new one cannot', async () => {
      const h = H();
      const p = await h.project({ name: 'Then remove' });
      ok(await h.post(`/projects/${p.id}/transfer`, { ownerId: h.a.regular.id }));
      problem(await h.post(`/projects/${p.id}/remove-member`, { memberId: h.a.regular.id }), 409, 'conflict');
      expect(ok(await h.post(`/projects/${p.id}/remove-member`, { memberId: h.a.owner.id }, { token: h.a.regular.token })).members).toEqual([h.a.regular.id]);
    });
  });
}
