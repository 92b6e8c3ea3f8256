import { z } from 'zod';
import { defineResource, RANGE, type Rec } from './define-resource';
import { f } from './fields';
import type { WriteContext } from './hooks';
import { fieldError } from './rules';
import { notFound, ProblemError } from '../errors/problem';
import { patchRecord } from '../services/records';
import { questionsSchema, resolveQuestions, type Question, type QuestionInput } from './form-fields';

/*
 * Forms (spec "Form"): workspace-wide (every member whose role reads forms
 * sees every form; `projectId` is an optional association that decides no
 * access), soft-deleted with restore. `name` is a read-only view of
 * `meta.title`; `fields` holds the questions (form-fields.ts). Decisions
 * where the spec is silent: docs/not-shown.md "Forms".
 */

export const FORM_TITLE_MAX = 255;
export const FORM_DESCRIPTION_MAX = 10_000;
export const AFTER_SUBMIT_HEADING_MAX = 255;
export const AFTER_SUBMIT_BODY_MAX = 10_000;
export const AUTO_REPLY_SUBJECT_MAX = 255;
export const AUTO_REPLY_BODY_MAX = 10_000;
export const FORM_AUTOMATIONS = ['task', 'doc', 'message', 'checkin'] as const;
export const DOC_ACCESS_TYPES = ['public', 'limited', 'private'] as const;
/** Length of the random key of a form's public link. */
const SHARE_KEY_LENGTH = 22;

const max = (n: number) => `must be at most ${n} characters`;

/** `meta`: the form's title (its name) and description; other keys are refused. */
const metaSchema = z.strictObject({
  title: z.string().trim().min(1, 'must not be blank').max(FORM_TITLE_MAX, max(FORM_TITLE_MAX)).optional(),
  description: z.string().max(FORM_DESCRIPTION_MAX, max(FORM_DESCRIPTION_MAX)).nullable().optional(),
});
type Meta = { title: string; description: string | null };

/** Text that must hold something besides white space, stored as sent. */
const nonBlank = (n: number) => z.string().max(n, max(n)).refine((s) => s.trim().length > 0, { message: 'must not be blank', params: { code: 'too_small' } });
const link = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2048, max(2048));

/** The after-submit object, stored verbatim with its snake_case keys; other keys are refused. */
const afterSubmitSchema = z.strictObject({
  heading: nonBlank(AFTER_SUBMIT_HEADING_MAX),
  body_text: z.string().max(AFTER_SUBMIT_BODY_MAX, max(AFTER_SUBMIT_BODY_MAX)),
  image_url: link.nullable().optional(),
  redirect_url: link.nullable().optional(),
  auto_reply_email: z.strictObject({
    subject: nonBlank(AUTO_REPLY_SUBJECT_MAX),
    body: nonBlank(AUTO_REPLY_BODY_MAX),
  }).nullable().optional(),
});

type Patch = Record<string, unknown>;

/**
 * The task automation's targets: with automation `task`, both are required
 * (in the same request when it turns `task` on) and must be a status and a
 * list of one project, the form's project when it has one (`wrong_project`);
 * with any other automation they are null, and sending one is `not_allowed`.
 */
async function checkAutomation(ctx: WriteContext, merged: Patch, sent: Patch, out: Patch): Promise<void> {
  if (merged.automation !== 'task') {
    for (const k of ['targetStatusId', 'targetListId']) {
      if (typeof sent[k] === 'string') throw fieldError(k, 'not_allowed', 'only a task automation has targets; send automation "task" with both targets');
      out[k] = null;
    }
    return;
  }
  const turningOn = sent.automation === 'task';
  const missing = ['targetStatusId', 'targetListId'].filter((k) => (turningOn ? typeof sent[k] !== 'string' : typeof merged[k] !== 'string'));
  if (missing.length) {
    throw new ProblemError('validation_failed', 'A task automation needs targetStatusId and targetListId, both in the request that sets automation to task', {
      errors: missing.map((k) => ({ field: k, code: 'required', message: `${k} is required when automation is task` })),
    });
  }
  // Locked: a concurrent delete of the status or list waits for this write (and then releases the form), or happened first (404).
  const status = await lockedTarget(ctx, 'status', merged.targetStatusId as string, 'targetStatusId');
  const list = await lockedTarget(ctx, 'list', merged.targetListId as string, 'targetListId');
  if (typeof merged.projectId === 'string' && status.projectId !== merged.projectId) {
    throw fieldError('targetStatusId', 'wrong_project', 'must be a status of the form\'s project');
  }
  if (list.projectId !== status.projectId) throw fieldError('targetListId', 'wrong_project', 'must be a list of the same project as targetStatusId');
}

/** A live status or list of the workspace read under a row lock (Postgres), else 404 naming the field. */
async function lockedTarget(ctx: WriteContext, res: 'status' | 'list', id: string, field: string): Promise<Rec> {
  const rec = await ctx.repo.get(ctx.registry.get(res), ctx.teamId, id, { lock: true });
  if (!rec) throw notFound(res, id, field);
  return rec;
}

/** The public link of a shared form: stable (its key is made once, at the first share), null while not shared. */
function share(ctx: WriteContext, rec: Patch, out: Patch): void {
  if (rec.isShared !== true) {
    out.url = null;
    return;
  }
  const key = typeof rec.shareKey === 'string' ? rec.shareKey : ctx.ids.secret(SHARE_KEY_LENGTH);
  out.shareKey = key;
  out.url = `/f/${key}`;
}

export const formResource = defineResource({
  name: 'form',
  path: 'forms',
  softDelete: true,
  policy: { regular: ['read', 'write', 'delete'] },
  fields: {
    name: f.readOnly('text'),
    meta: f.json(metaSchema, { required: true }),
    automation: f.enum(FORM_AUTOMATIONS, { nullable: true }),
    targetStatusId: f.ref('status', { nullable: true, filter: false }),
    targetListId: f.ref('list', { nullable: true, filter: false }),
    afterSubmit: f.json(afterSubmitSchema, { nullable: true }),
    multiSubmit: f.boolean(),
    docAccessType: f.enum(DOC_ACCESS_TYPES),
    isShared: f.boolean(),
    url: f.readOnly('text', { nullable: true }),
    shareKey: f.readOnly('text', { nullable: true, internal: true }),
    projectId: f.ref('project', { nullable: true }),
    createdById: f.readOnly('text', { nullable: true }),
    fields: f.json(questionsSchema, { required: true }),
  },
  filters: {
    purgeAt: { ops: ['null', 'notNull', ...RANGE] },
    automation: { ops: ['eq', 'in'] },
    docAccessType: { ops: ['eq', 'in'] },
    projectId: { ops: ['eq', 'in'] },
    createdById: { ops: ['eq', 'in'] },
    createdAt: { ops: RANGE },
  },
  sortable: ['name'],
  defaultSort: 'createdAt',
  expand: {
    createdBy: { kind: 'one', target: 'member', field: 'createdById' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      const meta = input.meta as Partial<Meta>;
      if (meta.title === undefined) throw fieldError('meta.title', 'required', 'a form needs a title (its name)');
      input.meta = { title: meta.title, description: meta.description ?? null };
      input.name = meta.title;
      input.automation ??= null;
      await checkAutomation(ctx, input, input, input);
      input.afterSubmit ??= null;
      input.multiSubmit ??= false;
      input.docAccessType ??= 'public';
      input.isShared ??= false;
      share(ctx, input, input);
      input.createdById = ctx.principal.memberId;
      input.fields = resolveQuestions(ctx, input.fields as unknown as QuestionInput[], []) as never;
    },
    async beforeUpdate(ctx, current, patch) {
      if (patch.meta !== undefined) {
        const sent = patch.meta as Partial<Meta>;
        const old = current.meta as Meta;
        // meta merges: the keys sent replace, the others stay.
        const meta: Meta = { title: sent.title ?? old.title, description: sent.description !== undefined ? sent.description : old.description };
        patch.meta = meta as never;
        patch.name = meta.title;
      }
      const touched = ['automation', 'targetStatusId', 'targetListId', 'projectId'].some((k) => k in patch);
      if (touched) await checkAutomation(ctx, { ...current, ...patch }, patch, patch);
      if (patch.isShared !== undefined) share(ctx, { ...current, ...patch }, patch);
      // Full replacement, kept by id; omitted, the questions stay as they are.
      if (patch.fields !== undefined) patch.fields = resolveQuestions(ctx, patch.fields as unknown as QuestionInput[], current.fields as unknown as Question[]) as never;
    },
  },
});

/**
 * Forms whose task automation targets these statuses or lists (being
 * destroyed) lose it: automation and both targets become null, each form
 * with `form.updated` (trashed forms too, so a restore brings back nothing
 * dangling).
 */
export async function releaseFormTargets(ctx: WriteContext, field: 'targetStatusId' | 'targetListId', ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const forms = ctx.registry.get('form');
  for (let i = 0; i < ids.length; i += 500) {
    for (const form of await ctx.repo.findBy(forms, ctx.teamId, forms.columnOf[field]!, ids.slice(i, i + 500), { includeTrashed: true })) {
      await patchRecord(ctx, forms, form, { automation: null, targetStatusId: null, targetListId: null });
    }
  }
}

/** Forms associated with a project being purged stay (forms are workspace-wide) without the association, each with `form.updated`. */
export async function releaseFormProject(ctx: WriteContext, projectId: string): Promise<void> {
  const forms = ctx.registry.get('form');
  for (const form of await ctx.repo.findBy(forms, ctx.teamId, forms.columnOf.projectId!, [projectId], { includeTrashed: true })) {
    await patchRecord(ctx, forms, form, { projectId: null });
  }
}
