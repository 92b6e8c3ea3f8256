import { z } from 'zod';
import type { CustomRoute } from '../http/routes';
import type { WriteContext } from '../services/context';
import type { OpResult } from '../services/engine';
import { notFound, ProblemError } from '../errors/problem';
import { parseInstant } from '../query/parse';
import { announce, assertUnchangedSince, stampChange } from '../services/records';
import { parseOperationBody } from '../services/body';
import { presentRecord } from '../services/serialize';
import { fieldError } from '../resources/rules';
import { DOCUMENT_BODY_MAX, DOCUMENT_TASK_LINK } from '../resources/document.resource';
import type { Rec } from '../resources/define-resource';

/*
 * The document operations (spec "Other resources": a document's body is set
 * at creation and afterwards only extended by the append operation; a
 * text-edit operation exists). Paths and bodies are "not shown":
 * docs/not-shown.md "Documents". Each emits its operation event
 * (document.append, document.editText) and answers the document.
 */

const expected = z.string().refine((s) => parseInstant(s) !== undefined, { message: 'must be the ISO 8601 updatedAt you last read', params: { code: 'invalid_timestamp' } });

const appendBody = z.strictObject({
  text: z.string().min(1, 'must not be empty').max(DOCUMENT_BODY_MAX, `must be at most ${DOCUMENT_BODY_MAX} characters`),
  expectedUpdatedAt: expected.optional(),
});

const editTextBody = z.strictObject({
  oldText: z.string().min(1, 'must not be empty').max(DOCUMENT_BODY_MAX, `must be at most ${DOCUMENT_BODY_MAX} characters`),
  newText: z.string().max(DOCUMENT_BODY_MAX, `must be at most ${DOCUMENT_BODY_MAX} characters`),
  replaceAll: z.boolean().optional(),
  expectedUpdatedAt: expected.optional(),
});

/** The live document, locked, that the caller may open (a private one of another member is 404), checked against expectedUpdatedAt. */
async function openDocument(ctx: WriteContext, id: string, expectedUpdatedAt: string | undefined): Promise<Rec> {
  const res = ctx.registry.get('document');
  const doc = await ctx.repo.get(res, ctx.teamId, id, { lock: true });
  if (!doc) throw notFound('document', id);
  await ctx.access.assertRecord(res, doc);
  assertUnchangedSince(res, doc, expectedUpdatedAt === undefined ? undefined : parseInstant(expectedUpdatedAt));
  return doc;
}

/** Store a new body, stamp the change, emit the operation event and answer the document. */
async function writeBody(ctx: WriteContext, doc: Rec, body: string, verb: 'append' | 'editText'): Promise<OpResult> {
  const res = ctx.registry.get('document');
  const after = await stampChange(ctx, res, doc, { body });
  await announce(ctx, res, after, verb);
  return { status: 200, body: await presentRecord(ctx, res, after) };
}

/** Append `text` to the body, verbatim (the caller sends any separating newline); the result stays within the body limit. */
async function append(ctx: WriteContext, id: string, raw: unknown): Promise<OpResult> {
  const input = parseOperationBody(appendBody, raw);
  const doc = await openDocument(ctx, id, input.expectedUpdatedAt);
  const body = `${(doc.body as string | null) ?? ''}${input.text}`;
  if (body.length > DOCUMENT_BODY_MAX) throw fieldError('text', 'too_big', `the body would exceed ${DOCUMENT_BODY_MAX} characters`);
  return writeBody(ctx, doc, body, 'append');
}

/**
 * Replace `oldText` with `newText`: exactly one occurrence must exist unless
 * `replaceAll` (then every one). Absent: 409 `conflict` (the document no longer
 * holds it); several without replaceAll: 400 `ambiguous_match` with `occurrences`.
 */
async function editText(ctx: WriteContext, id: string, raw: unknown): Promise<OpResult> {
  const input = parseOperationBody(editTextBody, raw);
  const doc = await openDocument(ctx, id, input.expectedUpdatedAt);
  const current = (doc.body as string | null) ?? '';
  const parts = current.split(input.oldText);
  const occurrences = parts.length - 1;
  if (occurrences === 0) throw new ProblemError('conflict', 'The document does not contain oldText', { field: 'oldText' });
  if (occurrences > 1 && !input.replaceAll) {
    throw new ProblemError('validation_failed', `oldText occurs ${occurrences} times; make it unique or send replaceAll: true`, {
      errors: [{ field: 'oldText', code: 'ambiguous_match', message: `occurs ${occurrences} times` }], occurrences,
    });
  }
  // Measured before it is built: a short body with many matches must not become a huge string first.
  const length = current.length + occurrences * (input.newText.length - input.oldText.length);
  if (length > DOCUMENT_BODY_MAX) throw fieldError('newText', 'too_big', `the body would exceed ${DOCUMENT_BODY_MAX} characters`);
  const body = parts.join(input.newText);
  return writeBody(ctx, doc, body, 'editText');
}

const attachBody = z.strictObject({ documentId: z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64) });

/**
 * Attach a document to a task, or detach it (task.attachDocument,
 * task.detachDocument). The task and the document must be ones the caller
 * may open (a private document of another member is 404 `documentId`);
 * detaching may name a document since trashed. A change bumps the task's
 * updatedAt and emits the operation event with the task and the documentId;
 * attaching an attached document (or detaching one that is not) changes
 * nothing and emits nothing. Answers the task.
 */
async function attachment(ctx: WriteContext, taskId: string, raw: unknown, verb: 'attachDocument' | 'detachDocument'): Promise<OpResult> {
  const { documentId } = parseOperationBody(attachBody, raw);
  const tasks = ctx.registry.get('task');
  const docs = ctx.registry.get('document');
  const task = await ctx.repo.get(tasks, ctx.teamId, taskId, { lock: true });
  if (!task) throw notFound('task', taskId);
  await ctx.access.assertRecord(tasks, task);
  const doc = await ctx.repo.get(docs, ctx.teamId, documentId, { includeTrashed: verb === 'detachDocument' });
  if (!doc) throw notFound('document', documentId, 'documentId');
  await ctx.access.assertRecord(docs, doc);
  const changed = verb === 'attachDocument'
    ? await ctx.repo.addLinks(DOCUMENT_TASK_LINK, ctx.teamId, documentId, [taskId], ctx.now)
    : await ctx.repo.removeLinks(DOCUMENT_TASK_LINK, documentId, [taskId]);
  const after = changed.length ? await stampChange(ctx, tasks, task, {}) : task;
  const shown = await presentRecord(ctx, tasks, after);
  if (changed.length) {
    ctx.emit({ type: `task.${verb}`, aggregateType: 'task', aggregateId: taskId, projectId: tasks.projectIdOf(after), payload: { task: shown, documentId } });
  }
  return { status: 200, body: shown };
}

export const documentRoutes: CustomRoute[] = [
  {
    method: 'POST', path: 'documents/{id}/append', scope: { resource: 'documents', action: 'write' }, write: true, subject: 'document', body: appendBody,
    run: (ctx, { params, body }) => append(ctx, params.id!, body),
  },
  {
    method: 'POST', path: 'documents/{id}/edit-text', scope: { resource: 'documents', action: 'write' }, write: true, subject: 'document', body: editTextBody,
    run: (ctx, { params, body }) => editText(ctx, params.id!, body),
  },
  {
    method: 'POST', path: 'tasks/{id}/attach-document', scope: { resource: 'tasks', action: 'write' }, write: true, subject: 'task', body: attachBody,
    run: (ctx, { params, body }) => attachment(ctx, params.id!, body, 'attachDocument'),
  },
  {
    method: 'POST', path: 'tasks/{id}/detach-document', scope: { resource: 'tasks', action: 'write' }, write: true, subject: 'task', body: attachBody,
    run: (ctx, { params, body }) => attachment(ctx, params.id!, body, 'detachDocument'),
  },
];
