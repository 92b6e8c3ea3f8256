import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import { fieldError } from './rules';
import { ProblemError } from '../errors/problem';
import { audienceOf } from '../services/records';
import { openProjectIdsAmong } from '../sql/queries/projects';
import { effectivePermissions } from '../auth/roles';
import { grants } from '../auth/scopes';
import type { WriteContext } from './hooks';

/*
 * Task handoffs ("Other resources": fields not shown). A member hands a task
 * to another member: `taskId` and `toMemberId` are set once; `fromMemberId`
 * is the caller (server-set); `note` is the sender's message. `status` moves
 * pending → accepted or pending → declined, only by the recipient, once
 * (`respondedAt` stamped); accepted and declined are final. Accepting makes
 * the recipient an assignee of the task and removes the sender from its
 * assignees (task.assignees.added / .removed). Only the sender edits the note
 * (while pending) or deletes the handoff (withdraws it). A handoff lives in
 * its task's project (`projectId`, read-only, follows the task); project
 * access follows the task; deleting the task deletes its handoffs.
 * Every decision: docs/not-shown.md "Task handoffs".
 */

export const TASK_HANDOFF_STATUSES = ['pending', 'accepted', 'declined'] as const;
export const TASK_HANDOFF_NOTE_MAX = 2000;

export const taskHandoffResource = defineResource({
  name: 'taskHandoff',
  path: 'task-handoffs',
  // Guests hand off and answer handoffs of tasks they can open, like regular members.
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write', 'delete'] },
  fields: {
    taskId: f.ref('task', { required: true, mode: 'createOnly', onDelete: 'cascade' }),
    toMemberId: f.ref('member', { required: true, mode: 'createOnly' }),
    fromMemberId: f.readOnly('text'),
    note: f.string({ trim: true, max: TASK_HANDOFF_NOTE_MAX, nullable: true }),
    status: f.enum(TASK_HANDOFF_STATUSES),
    respondedAt: f.readOnly('timestamp', { nullable: true }),
    projectId: f.readOnly('text'),
  },
  projectField: 'projectId',
  projectFrom: 'taskId',
  listParams: { projectId: {} },
  filters: {
    fromMemberId: { ops: ['eq', 'in'] },
    status: { ops: ['eq', 'in'] },
    createdAt: { ops: RANGE },
  },
  defaultSort: '-createdAt',
  expand: { fromMember: { kind: 'one', target: 'member', field: 'fromMemberId' } },
  hooks: {
    async beforeCreate(ctx, input) {
      if (input.status !== undefined && input.status !== 'pending') {
        throw fieldError('status', 'transition_not_allowed', 'a handoff starts pending; the recipient accepts or declines it');
      }
      input.status = 'pending';
      input.fromMemberId = ctx.principal.memberId;
      input.respondedAt = null;
      input.note ??= null;
      if (input.toMemberId === ctx.principal.memberId) throw fieldError('toMemberId', 'self_handoff', 'cannot hand a task to yourself');
      const to = (await ctx.mustGet('member', input.toMemberId!, 'toMemberId'));
      if (to.active !== true) throw fieldError('toMemberId', 'member_inactive', 'the recipient is not an active member');
      const task = await ctx.mustGet('task', input.taskId!, 'taskId');
      if (!(await memberOpens(ctx, to, task.projectId as string))) {
        throw fieldError('toMemberId', 'recipient_no_access', "the recipient cannot open the task's project");
      }
    },
    async beforeUpdate(ctx, current, patch) {
      const me = ctx.principal.memberId;
      if (patch.note !== undefined) {
        if (current.fromMemberId !== me) throw notYours('Only the sender edits the note of a handoff');
        if (current.status !== 'pending') throw fieldError('note', 'handoff_closed', `the handoff is already ${current.status}`);
      }
      if (patch.status !== undefined && patch.status !== current.status) {
        if (current.toMemberId !== me) throw notYours('Only the recipient accepts or declines a handoff');
        if (current.status !== 'pending' || patch.status === 'pending') {
          throw fieldError('status', 'transition_not_allowed', `cannot move a handoff from ${current.status} to ${patch.status}`);
        }
        // Accepting changes the task's assignees: the caller needs what a PATCH of the task's assignees needs.
        if (patch.status === 'accepted' && !(grants(ctx.principal.scopes, 'tasks', 'write') && grants(ctx.principal.permissions, 'tasks', 'write'))) {
          throw new ProblemError('permission_denied', 'Accepting a handoff changes the task\'s assignees: tasks:write is needed', { missingPermissions: ['tasks:write'] });
        }
        patch.respondedAt = ctx.now;
      } else if (patch.status !== undefined) {
        delete patch.status;
      }
    },
    async afterUpdate(ctx, before, after) {
      if (before.status === 'pending' && after.status === 'accepted') await takeOver(ctx, after.taskId, after.toMemberId, after.fromMemberId);
    },
    beforeDelete(ctx, rec) {
      if (rec.fromMemberId !== ctx.principal.memberId) throw notYours('Only the sender deletes (withdraws) a handoff');
    },
  },
});

function notYours(detail: string): ProblemError {
  return new ProblemError('permission_denied', detail, { missingPermissions: [] });
}

/**
 * May this member open the project? Holders of viewAllProjects (owners and
 * managers, or a custom role granting it) open every project; everyone opens
 * projects they own or belong to; non-guests also open public and workspace
 * projects (services/access.ts, for a member other than the caller).
 */
async function memberOpens(ctx: WriteContext, member: Rec, projectId: string): Promise<boolean> {
  const role = typeof member.roleId === 'string' ? await ctx.repo.get(ctx.registry.get('role'), ctx.teamId, member.roleId) : undefined;
  if (role && effectivePermissions(ctx.registry, role).includes('viewAllProjects')) return true;
  const open = member.role === 'client' ? [] : ['public', 'workspace'];
  return (await openProjectIdsAmong(ctx.repo, ctx.teamId, [projectId], member.id, open)).length > 0;
}

/** Accepting: the recipient becomes an assignee of the task and the sender stops being one, with the task's membership events. */
async function takeOver(ctx: WriteContext, taskId: string, to: string, from: string): Promise<void> {
  const tasks = ctx.registry.get('task');
  const task = await ctx.repo.get(tasks, ctx.teamId, taskId, { lock: true });
  if (!task) return;
  const kind = 'task.assignees';
  const added = await ctx.repo.addLinks(kind, ctx.teamId, taskId, [to], ctx.now);
  const removed = await ctx.repo.removeLinks(kind, taskId, [from]);
  if (added.length === 0 && removed.length === 0) return;
  await ctx.repo.update(tasks, ctx.teamId, taskId, { ...(await ctx.touch(task.updatedAt as number)) });
  const who = await audienceOf(ctx, tasks, task);
  const emit = (relatedId: string, change: 'added' | 'removed') => ctx.emit({
    type: `task.assignees.${change}`, aggregateType: 'task', aggregateId: taskId, projectId: tasks.projectIdOf(task),
    payload: { parentId: taskId, relatedId, relation: 'assignees' }, ...(who ? { audience: who } : {}),
  });
  for (const id of removed) emit(id, 'removed');
  for (const id of added) emit(id, 'added');
  const after = (await ctx.repo.get(tasks, ctx.teamId, taskId, { links: true }))!;
  await tasks.hooks?.afterLinksChange?.(ctx, after, 'assignees', added, removed);
}
