import { defineResource, RANGE } from './define-resource';
import { f } from './fields';
import { fieldError } from './rules';
import { ProblemError } from '../errors/problem';
import { iso } from '../clock/index';
import { countCustomReminders } from '../sql/queries/reminders';

/*
 * Reminders (spec "Reminder", "Limits": reminder date at least 5 minutes
 * ahead). Personal: every reminder is private to its creator (`privateTo`
 * on an always-true internal column), so every other member, whatever their
 * role, gets 404 on it, never lists it, and its events reach only webhooks
 * the creator registered. Hard-deleted; a deleted task takes its reminders
 * with it. `overdue` reminders are made and removed by the service
 * (jobs/reminders.ts) and are read-only through the API. Every decision
 * taken here: docs/not-shown.md "Reminders".
 */

/** Spec "Limits": a reminder's date is at least 5 minutes after the request's instant (exactly 5:00 is accepted). */
export const REMINDER_MIN_LEAD_MS = 5 * 60 * 1000;
export const REMINDER_TYPES = ['custom', 'overdue'] as const;
/** Most custom reminders a member keeps on one task. */
export const REMINDERS_PER_TASK_MAX = 20;
/** Most custom reminders a member keeps in all. */
export const REMINDERS_PER_MEMBER_MAX = 1000;

/** 400 validation_failed on `date` unless it is at least {@link REMINDER_MIN_LEAD_MS} after `now`. */
function checkLead(date: number, now: number): void {
  if (date - now < REMINDER_MIN_LEAD_MS) {
    throw fieldError('date', 'too_soon', `must be at least 5 minutes after now (${iso(now + REMINDER_MIN_LEAD_MS)} or later)`);
  }
}

/** An overdue reminder is the service's: the API neither changes nor deletes it. */
function serviceOwned(verb: string): ProblemError {
  return new ProblemError('permission_denied', `Overdue reminders are kept by the service from task due dates; they cannot be ${verb} through the API`, {
    missingPermissions: [], type: 'overdue',
  });
}

export const reminderResource = defineResource({
  name: 'reminder',
  path: 'reminders',
  // Every member manages their own reminders, guests too (on tasks they can open).
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write', 'delete'] },
  fields: {
    date: f.timestamp({ required: true }),
    taskId: f.ref('task', { required: true, mode: 'createOnly', onDelete: 'cascade' }),
    type: f.enum(REMINDER_TYPES, { mode: 'createOnly' }),
    createdById: f.readOnly('text'),
    projectId: f.readOnly('text'),
    /** When the reminder came due and its notification (`reminder.updated`) went out; null until then, and again after `date` moves. */
    firedAt: f.readOnly('timestamp', { nullable: true }),
    /** Always true: makes every row private to `createdById` (the engine's `privateTo`). */
    personal: f.readOnly('boolean', { internal: true }),
  },
  projectField: 'projectId',
  projectFrom: 'taskId',
  listParams: { projectId: {} },
  privateTo: { field: 'personal', value: true, owner: 'createdById' },
  filters: {
    taskId: { ops: ['eq', 'in'] },
    type: { ops: ['eq', 'in'] },
    date: { ops: ['eq', 'gt', 'gte', 'lt', 'lte'] },
    createdAt: { ops: RANGE },
  },
  defaultSort: 'date',
  defaultSortWithoutProject: '-updatedAt',
  hooks: {
    async beforeCreate(ctx, input) {
      if (input.type === 'overdue') {
        throw fieldError('type', 'not_allowed', 'overdue reminders are created by the service from task due dates; create custom ones');
      }
      input.type = 'custom';
      checkLead(input.date!, ctx.now);
      // Bounded per member and task, so one member cannot make every write to a shared task carry thousands of reminder events.
      const rem = ctx.registry.get('reminder');
      const me = ctx.principal.memberId;
      if ((await countCustomReminders(ctx.repo.db, rem, ctx.teamId, me, input.taskId as string)) >= REMINDERS_PER_TASK_MAX) {
        throw fieldError('taskId', 'too_many_on_task', `you have ${REMINDERS_PER_TASK_MAX} reminders on this task, the most allowed; delete one first`);
      }
      if ((await countCustomReminders(ctx.repo.db, rem, ctx.teamId, me)) >= REMINDERS_PER_MEMBER_MAX) {
        throw fieldError('taskId', 'too_many_reminders', `you have ${REMINDERS_PER_MEMBER_MAX} reminders, the most a member may keep; delete one first`);
      }
      input.createdById = me;
      input.personal = true;
      input.firedAt = null;
    },
    beforeUpdate(ctx, current, patch) {
      if (current.type === 'overdue') throw serviceOwned('changed');
      if (patch.date !== undefined) {
        checkLead(patch.date, ctx.now);
        // A new date re-arms the reminder: it fires again when that date comes.
        patch.firedAt = null;
      }
    },
    beforeDelete(_ctx, rec) {
      if (rec.type === 'overdue') throw serviceOwned('deleted');
    },
  },
});
