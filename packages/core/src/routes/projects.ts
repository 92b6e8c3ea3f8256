import { z } from 'zod';
import type { CustomRoute } from '../http/routes';
import type { WriteContext } from '../services/context';
import { membershipEvents, type OpResult } from '../services/engine';
import { notFound, ProblemError } from '../errors/problem';
import { audienceOf, stampChange } from '../services/records';
import { parseOperationBody } from '../services/body';
import { presentRecord } from '../services/serialize';
import { fieldError } from '../resources/rules';
import { activeMember, CHAT_MEMBERS, CHAT_OWNERS, syncDiscussion } from '../resources/chat-rooms';
import type { Rec } from '../resources/define-resource';
import { settleStrandedHandoffs } from '../resources/task-handoff.resource';

/*
 * The project operations (spec "Events": project.addMember,
 * project.removeMember, project.transfer; spec "Project": ownerId changes only
 * by the transfer operation, discussionChatId). Paths and bodies are "not
 * shown": docs/not-shown.md "Project operations". Each answers the project
 * and, when it changed something, emits its operation event carrying that
 * answer under `project`; a call that changes nothing answers the project as
 * it is and emits nothing. Roster changes also emit the roster's membership
 * events (project.members.added / .removed, the engine's membershipEvents), as the members sub-routes do,
 * and the discussion chat follows the roster (chat-rooms.ts syncDiscussion).
 */

const PROJECT_MEMBERS = 'project.members';
const ID = z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64);

const memberBody = z.strictObject({ memberId: ID });
const transferBody = z.strictObject({ ownerId: ID });

/** The live project, locked, that the caller may open (else 404 / 403 project_access_denied). */
async function openProject(ctx: WriteContext, id: string): Promise<Rec> {
  const res = ctx.registry.get('project');
  const p = await ctx.repo.get(res, ctx.teamId, id, { lock: true });
  if (!p) throw notFound('project', id);
  await ctx.access.assertRecord(res, p);
  return p;
}

/** Answer the project; when it changed, emit the operation event with that answer (plus `extra` beside it). */
async function answer(ctx: WriteContext, project: Rec, verb: 'addMember' | 'removeMember' | 'transfer' | undefined, extra: Record<string, unknown> = {}): Promise<OpResult> {
  const res = ctx.registry.get('project');
  const stored = (await ctx.repo.get(res, ctx.teamId, project.id, { links: true }))!;
  const shown = await presentRecord(ctx, res, stored);
  if (verb) {
    const audience = await audienceOf(ctx, res, stored);
    ctx.emit({
      type: `project.${verb}`, aggregateType: 'project', aggregateId: project.id, projectId: project.id,
      payload: { project: shown, ...extra }, ...(audience ? { audience } : {}),
    });
  }
  return { status: 200, body: shown };
}

/** POST /projects/{id}/add-member {memberId}: an active member of the workspace joins the roster (and the discussion chat). */
async function addMember(ctx: WriteContext, id: string, raw: unknown): Promise<OpResult> {
  const { memberId } = parseOperationBody(memberBody, raw);
  const project = await openProject(ctx, id);
  await activeMember(ctx, memberId, 'memberId');
  const added = await ctx.repo.addLinks(PROJECT_MEMBERS, ctx.teamId, project.id, [memberId], ctx.now);
  if (added.length === 0) return answer(ctx, project, undefined);
  const after = await stampChange(ctx, ctx.registry.get('project'), project, {});
  await membershipEvents(ctx, ctx.registry.get('project'), after, 'members', added, 'added');
  await syncDiscussion(ctx, after, added, []);
  return answer(ctx, after, 'addMember', { memberId });
}

/**
 * POST /projects/{id}/remove-member {memberId}: the member leaves the roster
 * (and the discussion chat). The owner cannot leave: 409 conflict (transfer
 * the project first). A member of the workspace who is not on the roster
 * changes nothing.
 */
async function removeMember(ctx: WriteContext, id: string, raw: unknown): Promise<OpResult> {
  const { memberId } = parseOperationBody(memberBody, raw);
  const project = await openProject(ctx, id);
  // Deactivated and removed (trashed) members can still be taken off a roster, as with DELETE /projects/{id}/members.
  const member = await ctx.repo.get(ctx.registry.get('member'), ctx.teamId, memberId, { includeTrashed: true });
  if (!member) throw notFound('member', memberId, 'memberId');
  if (memberId === project.ownerId) {
    throw new ProblemError('conflict', 'The project owner cannot be removed from the project; transfer the project to another member first', { field: 'memberId' });
  }
  const removed = await ctx.repo.removeLinks(PROJECT_MEMBERS, project.id, [memberId]);
  if (removed.length === 0) return answer(ctx, project, undefined);
  const after = await stampChange(ctx, ctx.registry.get('project'), project, {});
  await membershipEvents(ctx, ctx.registry.get('project'), after, 'members', removed, 'removed');
  await syncDiscussion(ctx, after, [], removed);
  // Unless they open it otherwise, their pending handoffs of the project's tasks are declined (docs/not-shown.md "Task handoffs").
  await settleStrandedHandoffs(ctx, 'projectId', [project.id]);
  return answer(ctx, after, 'removeMember', { memberId });
}

/**
 * POST /projects/{id}/transfer {ownerId}: the one way ownerId changes. Only
 * the project's owner or a member who opens every project (viewAllProjects:
 * the workspace's owner and managers) may transfer; others get 403
 * permission_denied. The new owner is an active, non-guest member; they join
 * the roster and own the discussion chat; the previous owner stays on the
 * roster (and in the chat, no longer as its owner).
 */
async function transfer(ctx: WriteContext, id: string, raw: unknown): Promise<OpResult> {
  const { ownerId } = parseOperationBody(transferBody, raw);
  const res = ctx.registry.get('project');
  const project = await openProject(ctx, id);
  const me = ctx.principal.memberId;
  if (project.ownerId !== me && !ctx.principal.permissions.has('viewAllProjects')) {
    throw new ProblemError('permission_denied', "Only the project's owner or a workspace owner or manager can transfer the project", {
      missingPermissions: ['viewAllProjects'],
    });
  }
  const next = await activeMember(ctx, ownerId, 'ownerId');
  if (next.role === 'client') throw fieldError('ownerId', 'guest_owner', 'a guest (client role) cannot own a project');
  if (ownerId === project.ownerId) return answer(ctx, project, undefined);
  const previous = typeof project.ownerId === 'string' ? project.ownerId : null;
  const after = await stampChange(ctx, res, project, { ownerId });
  // Both stay on the project: the new owner and the previous one are on the roster.
  const added = await ctx.repo.addLinks(PROJECT_MEMBERS, ctx.teamId, project.id, previous ? [ownerId, previous] : [ownerId], ctx.now);
  await membershipEvents(ctx, ctx.registry.get('project'), after, 'members', added, 'added');
  const chatId = after.discussionChatId;
  if (typeof chatId === 'string') {
    await ctx.repo.addLinks(CHAT_MEMBERS, ctx.teamId, chatId, [ownerId], ctx.now);
    await ctx.repo.addLinks(CHAT_OWNERS, ctx.teamId, chatId, [ownerId], ctx.now);
    if (previous) await ctx.repo.removeLinks(CHAT_OWNERS, chatId, [previous]);
  }
  return answer(ctx, after, 'transfer', { previousOwnerId: previous });
}

const write = { resource: 'projects', action: 'write' } as const;

export const projectRoutes: CustomRoute[] = [
  { method: 'POST', path: 'projects/{id}/add-member', scope: write, write: true, subject: 'project', body: memberBody, run: (ctx, { params, body }) => addMember(ctx, params.id!, body) },
  { method: 'POST', path: 'projects/{id}/remove-member', scope: write, write: true, subject: 'project', body: memberBody, run: (ctx, { params, body }) => removeMember(ctx, params.id!, body) },
  { method: 'POST', path: 'projects/{id}/transfer', scope: write, write: true, subject: 'project', body: transferBody, run: (ctx, { params, body }) => transfer(ctx, params.id!, body) },
];
