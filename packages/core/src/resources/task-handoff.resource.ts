import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import { fieldError } from './rules';
import { notFound, ProblemError } from '../errors/problem';
import { announce, memberOpensProject } from '../services/records';
import { membershipEvents } from '../services/engine';
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
 * access follows the task; deleting the task deletes its handoffs. A task
 * of a trashed project is neither handed off nor taken over (409 conflict).
 * A member who stops being able to answer (deactivated, removed, erased,
 * purged) has the handoffs offered to them declined and the pending ones
 * they sent withdrawn ({@link settleHandoffsOf}); a recipient who can no
 * longer open the task's project (roster, access type, role, task moved) has
 * them declined ({@link settleStrandedHandoffs}).
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
      const to = await lockParties(ctx, input.toMemberId!);
      if (to.active !== true) throw fieldError('toMemberId', 'member_inactive', 'the recipient is not an active member');
      const task = await ctx.mustGet('task', input.taskId!, 'taskId');
      await assertProjectLive(ctx, task);
      if (!(await memberOpensProject(ctx, to, task.projectId as string))) {
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
        // A trashed project takes no new work: the handoff stays pending (accept it after a restore, or decline it now).
        if (patch.status === 'accepted') await assertProjectLive(ctx, await ctx.mustGet('task', current.taskId, 'taskId'));
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
 * Lock the caller's membership and the recipient's, in id order (two
 * handoffs between the same two people, either way round, never deadlock):
 * a concurrent deactivation or removal of either waits for this handoff and
 * then settles it ({@link settleHandoffsOf}), or came first and is seen here.
 * Returns the recipient (404 naming toMemberId when not a live member); a
 * caller deactivated or removed meanwhile is 401 token_owner_inactive.
 */
async function lockParties(ctx: WriteContext, toMemberId: string): Promise<Rec> {
  const members = ctx.registry.get('member');
  const me = ctx.principal.memberId;
  let to: Rec | undefined;
  for (const id of [me, toMemberId].sort()) {
    const m = await ctx.repo.get(members, ctx.teamId, id, { lock: true, includeTrashed: true });
    if (id === toMemberId) to = m;
    else if (!m || m.active !== true || m.purgeAt !== null) throw new ProblemError('token_owner_inactive', 'Your membership was deactivated or removed');
  }
  if (!to || to.purgeAt !== null) throw notFound('member', toMemberId, 'toMemberId');
  return to;
}

/** 409 conflict when the task's project is in the trash (a trashed project takes no new work); nothing is written. */
async function assertProjectLive(ctx: WriteContext, task: Rec): Promise<void> {
  const project = await ctx.repo.get(ctx.registry.get('project'), ctx.teamId, task.projectId as string, { includeTrashed: true });
  if (project && project.purgeAt !== null) {
    throw new ProblemError('conflict', "The task's project is in the trash; restore the project first", { field: 'taskId', reason: 'project_trashed', projectId: project.id });
  }
}

/** Accepting: the recipient becomes an assignee of the task and the sender stops being one, with the task's membership events. */
async function takeOver(ctx: WriteContext, taskId: string, to: string, from: string): Promise<void> {
  const tasks = ctx.registry.get('task');
  // Locked: two handoffs of one task accepted at once take turns, the second reading the task as the first left it (its
  // updatedAt advances past the first's; the link rows alone would already keep both recipients and remove the sender once).
  const task = await ctx.repo.get(tasks, ctx.teamId, taskId, { lock: true });
  // Never answer "accepted" for a take-over that did not happen.
  if (!task) throw notFound('task', taskId, 'taskId');
  const kind = 'task.assignees';
  const added = await ctx.repo.addLinks(kind, ctx.teamId, taskId, [to], ctx.now);
  const removed = await ctx.repo.removeLinks(kind, taskId, [from]);
  if (added.length === 0 && removed.length === 0) return;
  await ctx.repo.update(tasks, ctx.teamId, taskId, { ...(await ctx.touch(task.updatedAt as number)) });
  await membershipEvents(ctx, tasks, task, 'assignees', removed, 'removed');
  await membershipEvents(ctx, tasks, task, 'assignees', added, 'added');
  const after = (await ctx.repo.get(tasks, ctx.teamId, taskId, { links: true }))!;
  await tasks.hooks?.afterLinksChange?.(ctx, after, 'assignees', added, removed);
}

/**
 * A member can no longer answer or follow up handoffs (deactivated, removed,
 * erased or purged): every pending handoff offered to them is declined
 * (`status: declined`, `respondedAt` now, `taskHandoff.updated`) and every
 * pending one they sent is withdrawn (deleted, `taskHandoff.removed`), as
 * they can no longer withdraw it themselves. Answered handoffs stay as they
 * are. The caller holds the member's row lock (every path changes it first),
 * so no new handoff of theirs appears meanwhile; the handoffs are locked in
 * id order, so a concurrent answer or withdrawal waits or has happened.
 * docs/not-shown.md "Task handoffs".
 */
export async function settleHandoffsOf(ctx: WriteContext, memberId: string): Promise<void> {
  const res = ctx.registry.get('taskHandoff');
  const seen = new Set<string>();
  for (const field of ['toMemberId', 'fromMemberId']) {
    for (const h of await ctx.repo.findWhere(res, ctx.teamId, { [field]: memberId, status: 'pending' })) seen.add(h.id);
  }
  if (seen.size === 0) return;
  const locked = await ctx.repo.findBy(res, ctx.teamId, 'id', [...seen], { orderBy: 'id', lock: 'delete' });
  for (const h of locked) {
    if (h.status !== 'pending') continue;
    if (h.fromMemberId === memberId) {
      await announce(ctx, res, h, 'removed');
      await ctx.repo.destroy(res, ctx.teamId, [h.id]);
    } else {
      await decline(ctx, h);
    }
  }
}

/** Decline a pending handoff (locked by the caller) for its recipient: `respondedAt` now, stamped by the caller (or the system), `taskHandoff.updated`. */
async function decline(ctx: WriteContext, h: Rec): Promise<void> {
  const res = ctx.registry.get('taskHandoff');
  const values = { status: 'declined', respondedAt: ctx.now, ...(await ctx.touch(h.updatedAt)) };
  await ctx.repo.update(res, ctx.teamId, h.id, values);
  await announce(ctx, res, { ...h, ...values } as Rec, 'updated');
}

/**
 * Pending handoffs whose recipient can no longer open the task's project
 * (they could not answer one: reading it is 403) are declined for them, as
 * if they had (`status: declined`, `respondedAt` now, `taskHandoff.updated`,
 * stamped by the caller). Called after a change that may take the project
 * away from recipients: a roster removal (POST /projects/{id}/remove-member,
 * DELETE /projects/{id}/members, a members replace) or an access-type change
 * (`by: projectId`), a role change (`by: toMemberId`), a task moved to another
 * project (`by: taskId`, `inProject` the project the tasks are in now, as
 * their handoffs follow them only afterwards). The handoffs are locked in id
 * order and read again: one answered or withdrawn meanwhile stays as it is.
 * docs/not-shown.md "Task handoffs".
 */
export async function settleStrandedHandoffs(ctx: WriteContext, by: 'projectId' | 'toMemberId' | 'taskId', ids: readonly string[], inProject?: string): Promise<void> {
  if (ids.length === 0) return;
  const res = ctx.registry.get('taskHandoff');
  const members = ctx.registry.get('member');
  const pending = (await ctx.repo.findBy(res, ctx.teamId, res.columnOf[by]!, ids)).filter((h) => h.status === 'pending');
  const stranded: string[] = [];
  for (const h of pending) {
    const to = await ctx.repo.get(members, ctx.teamId, h.toMemberId as string, { includeTrashed: true });
    if (!to || !(await memberOpensProject(ctx, to, inProject ?? (h.projectId as string)))) stranded.push(h.id);
  }
  if (stranded.length === 0) return;
  for (const h of await ctx.repo.findBy(res, ctx.teamId, 'id', stranded, { orderBy: 'id', lock: 'delete' })) {
    if (h.status === 'pending') await decline(ctx, h);
  }
}
