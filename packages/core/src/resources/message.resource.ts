import { z } from 'zod';
import { defineResource, RANGE, type Rec } from './define-resource';
import { BATCH_MAX, f } from './fields';
import type { ReadContext, WriteContext } from './hooks';
import { fieldError, looksPromotional } from './rules';
import { ProblemError } from '../errors/problem';
import { directChat } from './chat-rooms';
import { insertRecord, newRecord, patchRecord, announce } from '../services/records';
import { presentRecord } from '../services/serialize';

/*
 * Messages (spec "Message"): chat messages, task, document and file
 * comments, annotation threads and replies; soft-deleted. A message is seen
 * by whoever sees the place it was posted in: its chat's members, its
 * project's members, a private document's creator. Decisions where the spec
 * is silent: docs/not-shown.md "Messages".
 */

export const MESSAGE_TEXT_MAX = 655_350;
export const MESSAGE_TYPES = ['text', 'gif', 'document', 'audio'] as const;
/** Subtypes of the messages the service posts itself. */
export const MESSAGE_SUBTYPES = ['hello', 'tieTask', 'untieTask', 'moveSubtask'] as const;
/**
 * Most characters of a message's text its events carry (the rest is on GET):
 * at 6 bytes a character escaped, 600,000 bytes, within the 1 MiB webhook cap.
 */
export const EVENT_TEXT_MAX = 100_000;
/** Most distinct mention tags one text may hold (each is looked up). */
export const MENTIONS_MAX = 100;
/** The parent contexts of a message: exactly one, except fileId with annotationId. */
export const MESSAGE_CONTEXTS = ['chatId', 'taskId', 'documentId', 'fileId', 'annotationId', 'parentMessageId', 'recipientMemberId'] as const;

const ID = z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64);

/**
 * Mention tags (spec "Message"): `<@member>`, `<?task>`, `<#project>`,
 * `<??status>`, `<^list>`, `<~label>`, `<$portfolio>`, `<!discussion>` (a
 * chat). `??` is tried before `?`.
 */
const MENTION = /<(\?\?|[@?#^~$!])([0-9A-Za-z_!]{1,64})>/g;
const MENTION_KINDS: Record<string, string> = { '@': 'member', '?': 'task', '#': 'project', '??': 'status', '^': 'list', '~': 'label', '$': 'portfolio', '!': 'chat' };

/** The mention tags of a text, by the resource they name. */
export function mentionsOf(text: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const m of text.matchAll(MENTION)) {
    const kind = MENTION_KINDS[m[1]!]!;
    let set = out.get(kind);
    if (!set) out.set(kind, (set = new Set()));
    set.add(m[2]!);
  }
  return out;
}

/**
 * Every mention must name a record of this workspace (400 `validation_failed`,
 * `mention_not_found` on `text`, listing the tags); at most
 * {@link MENTIONS_MAX} distinct tags. Answers the mentioned member ids.
 */
async function checkMentions(ctx: WriteContext, text: string | null | undefined): Promise<string[]> {
  if (!text) return [];
  const found = mentionsOf(text);
  const total = [...found.values()].reduce((n, s) => n + s.size, 0);
  if (total > MENTIONS_MAX) throw fieldError('text', 'too_many_mentions', `holds ${total} distinct mentions; at most ${MENTIONS_MAX}`);
  const missing: string[] = [];
  for (const [kind, ids] of found) {
    const res = ctx.registry.get(kind);
    const have = new Set((await ctx.repo.getMany(res, ctx.teamId, [...ids])).map((r) => r.id));
    for (const id of ids) if (!have.has(id)) missing.push(id);
  }
  if (missing.length) {
    throw new ProblemError('validation_failed', 'The text mentions records that are not in this workspace', {
      errors: [{ field: 'text', code: 'mention_not_found', message: `no such record in this workspace: ${missing.slice(0, 20).join(', ')}` }],
      mentions: missing.slice(0, 100),
    });
  }
  return [...(found.get('member') ?? [])];
}

/** Who sees a message: copied from the place it was posted in. */
interface Reach {
  projectId: string | null;
  accessChatId: string | null;
  privateDoc: boolean;
  privateOwnerId: string | null;
}

/** The reach of a record a message (or reply) hangs from. */
function reachOf(parent: string, rec: Rec, projectId: string | null): Reach {
  switch (parent) {
    case 'chatId':
      return { projectId: null, accessChatId: rec.id, privateDoc: false, privateOwnerId: null };
    case 'documentId':
      return { projectId, accessChatId: null, privateDoc: rec.accessType === 'private', privateOwnerId: (rec.createdById as string | null) ?? null };
    case 'fileId':
      return { projectId, accessChatId: (rec.accessChatId as string | null) ?? null, privateDoc: rec.privateDoc === true, privateOwnerId: (rec.ownerId as string | null) ?? null };
    case 'annotationId':
    case 'parentMessageId':
      return { projectId, accessChatId: (rec.accessChatId as string | null) ?? null, privateDoc: rec.privateDoc === true, privateOwnerId: (rec.privateOwnerId as string | null) ?? null };
    default:
      return { projectId, accessChatId: null, privateDoc: false, privateOwnerId: null };
  }
}

const RESOURCE_OF: Record<string, string> = { chatId: 'chat', taskId: 'task', documentId: 'document', fileId: 'file', annotationId: 'annotation', parentMessageId: 'message' };

/**
 * Exactly one parent context, or fileId with annotationId (the annotation
 * must be on that file); recipientMemberId becomes the 1:1 chat. Answers
 * the context that decides access.
 */
async function placeMessage(ctx: WriteContext, input: Record<string, unknown>): Promise<Reach> {
  const sent = MESSAGE_CONTEXTS.filter((k) => input[k] !== undefined && input[k] !== null);
  const pair = sent.length === 2 && sent.includes('fileId') && sent.includes('annotationId');
  if (sent.length === 0) {
    throw new ProblemError('validation_failed', `A message needs exactly one of ${MESSAGE_CONTEXTS.join(', ')}`, {
      errors: [{ field: 'chatId', code: 'context_required', message: `one of ${MESSAGE_CONTEXTS.join(', ')} is required` }],
    });
  }
  if (sent.length > 1 && !pair) {
    throw new ProblemError('validation_failed', `A message has one parent context; ${sent.join(' and ')} were given`, {
      errors: sent.map((field) => ({ field, code: 'one_context', message: 'only one parent context (or fileId with annotationId) may be given' })),
    });
  }
  if (sent[0] === 'recipientMemberId') {
    const { chat } = await directChat(ctx, input.recipientMemberId as string);
    input.chatId = chat.id;
    input.recipientMemberId = null;
    return reachOf('chatId', chat, null);
  }
  const decisive = pair ? 'annotationId' : sent[0]!;
  const res = ctx.registry.get(RESOURCE_OF[decisive]!);
  const rec = await ctx.mustGet(res, input[decisive] as string, decisive);
  await ctx.access.assertRecord(res, rec);
  if (pair && rec.fileId !== input.fileId) throw fieldError('annotationId', 'wrong_file', 'must be an annotation of the file given in fileId');
  if (decisive === 'annotationId') input.fileId = rec.fileId;
  return reachOf(decisive, rec, (res.projectIdOf(rec) as string | null) ?? null);
}

/** Each type's payload (spec "Message": non-text kinds need url, sharedDocumentId, audioDuration). */
function checkPayload(input: Record<string, unknown>): void {
  const type = (input.type ?? 'text') as string;
  const need = (field: string, what: string) => {
    if (input[field] === undefined || input[field] === null) throw fieldError(field, 'required', `a ${type} message needs ${what}`);
  };
  if (type === 'text' && (typeof input.text !== 'string' || input.text.trim() === '')) throw fieldError('text', 'required', 'a text message needs text');
  if (type === 'gif') need('url', 'the GIF\'s url');
  if (type === 'document') need('sharedDocumentId', 'the sharedDocumentId it shares');
  if (type === 'audio') need('audioDuration', 'its audioDuration in seconds');
}

/** The tagged members of messages in response form (expand `tagged`). */
async function taggedEntries(ctx: ReadContext, recs: readonly Rec[]): Promise<Map<string, unknown[]>> {
  const members = ctx.registry.get('member');
  const ids = [...new Set(recs.flatMap((r) => (r.tagged as string[] | null) ?? []))];
  const found = new Map((await ctx.repo.getMany(members, ctx.teamId, ids)).map((m) => [m.id, m]));
  const shown = new Map<string, Record<string, unknown>>();
  for (const [id, m] of found) shown.set(id, await presentRecord(ctx, members, m));
  return new Map(recs.map((r) => [r.id, ((r.tagged as string[] | null) ?? []).map((id) => shown.get(id)).filter((x) => x !== undefined)]));
}

export const messageResource = defineResource({
  name: 'message',
  path: 'messages',
  softDelete: true,
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write', 'delete'] },
  fields: {
    text: f.string({ max: MESSAGE_TEXT_MAX, nullable: true }),
    url: f.url({ nullable: true, mode: 'createOnly' }),
    type: f.enum(MESSAGE_TYPES, { mode: 'createOnly' }),
    hideLinkPreview: f.boolean(),
    audioDuration: f.number({ min: 0, max: 86_400, nullable: true, mode: 'createOnly' }),
    sharedDocumentId: f.ref('document', { nullable: true, mode: 'createOnly' }),
    tagged: f.json(z.array(ID).max(BATCH_MAX, `must hold at most ${BATCH_MAX} ids`), { mode: 'createOnly' }),
    files: f.refs('files', { target: 'file' }),
    teamId: f.readOnly('text', { column: 'team_id' }),
    subtype: f.readOnly('text', { nullable: true }),
    isEdited: f.readOnly('boolean'),
    botName: f.readOnly('text', { nullable: true }),
    botAvatar: f.readOnly('text', { nullable: true }),
    authorId: f.readOnly('text', { nullable: true }),
    // Messages are posted to a project's discussion chat (unlisted) by its members: placeMessage checks membership.
    chatId: f.ref('chat', { nullable: true, mode: 'createOnly', onDelete: 'cascade', reachesUnlisted: true }),
    taskId: f.ref('task', { nullable: true, mode: 'createOnly', onDelete: 'cascade' }),
    documentId: f.ref('document', { nullable: true, mode: 'createOnly', onDelete: 'cascade' }),
    fileId: f.ref('file', { nullable: true, mode: 'createOnly', onDelete: 'cascade' }),
    annotationId: f.ref('annotation', { nullable: true, mode: 'createOnly', onDelete: 'cascade' }),
    parentMessageId: f.ref('message', { nullable: true, mode: 'createOnly', onDelete: 'cascade' }),
    recipientMemberId: f.text(ID, { nullable: true, mode: 'createOnly', writeOnly: true }),
    projectId: f.readOnly('text', { nullable: true, internal: true }),
    accessChatId: f.readOnly('text', { nullable: true, internal: true }),
    privateDoc: f.readOnly('boolean', { internal: true }),
    privateOwnerId: f.readOnly('text', { nullable: true, internal: true }),
  },
  projectField: 'projectId',
  listParams: { projectId: {} },
  membersOnly: { links: 'chat.members', field: 'accessChatId' },
  privateTo: { field: 'privateDoc', value: true, owner: 'privateOwnerId' },
  filters: {
    purgeAt: { ops: ['null', 'notNull', ...RANGE] },
    authorId: { ops: ['eq', 'in'] },
    // A chat's messages are outside projects: even a caller who opens over 1,000 projects reads them.
    chatId: { ops: ['eq', 'in'], outsideProjects: true },
    taskId: { ops: ['eq', 'in'] },
    documentId: { ops: ['eq', 'in'] },
    fileId: { ops: ['eq', 'in'] },
    annotationId: { ops: ['eq', 'in'] },
    parentMessageId: { ops: ['eq', 'in'] },
    sharedDocumentId: { ops: ['eq', 'in'] },
    type: { ops: ['eq', 'in'] },
    subtype: { ops: ['eq', 'in', 'null', 'notNull'] },
    isEdited: { ops: ['eq'] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  defaultSort: '-createdAt',
  expand: {
    author: { kind: 'one', target: 'member', field: 'authorId' },
    tagged: { kind: 'entries', reads: 'member', load: taggedEntries },
    messages: { kind: 'children', target: 'message', field: 'parentMessageId' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      const reach = await placeMessage(ctx, input);
      input.type ??= 'text';
      checkPayload(input);
      const mentioned = await checkMentions(ctx, input.text);
      const tagged = [...new Set([...(input.tagged ?? []), ...mentioned])];
      if (tagged.length > BATCH_MAX) throw fieldError('tagged', 'too_big', `at most ${BATCH_MAX} tagged members`);
      const members = await ctx.repo.getMany(ctx.registry.get('member'), ctx.teamId, tagged);
      if (members.length !== tagged.length) {
        const have = new Set(members.map((m) => m.id));
        throw new ProblemError('resource_not_found', 'tagged names members that are not in this workspace', { field: 'tagged', missing: tagged.filter((id) => !have.has(id)).slice(0, 100) });
      }
      Object.assign(input, reach, {
        tagged, teamId: ctx.teamId, authorId: ctx.principal.memberId, isEdited: false, subtype: null,
        hideLinkPreview: input.hideLinkPreview ?? false, botName: null, botAvatar: null,
      });
    },
    async afterCreate(ctx, rec) {
      await afterPosted(ctx, rec);
    },
    forEvent(shown) {
      // A long text could pass the 1 MiB webhook payload cap and count as a failed delivery: events carry its start.
      const text = shown.text;
      if (typeof text !== 'string' || text.length <= EVENT_TEXT_MAX) return shown;
      return { ...shown, text: text.slice(0, EVENT_TEXT_MAX), textTruncated: true };
    },
    beforeLinksChange(ctx, current) {
      assertAuthor(ctx, current, 'edits');
    },
    async beforeUpdate(ctx, current, patch) {
      assertAuthor(ctx, current, 'edits');
      if ('text' in patch) {
        checkPayload({ ...current, ...patch });
        const mentioned = await checkMentions(ctx, patch.text);
        const extra = mentioned.filter((id) => !current.tagged.includes(id));
        // Mentions added by an edit are recorded too (tagged itself is not writable after creation).
        if (extra.length) (patch as Record<string, unknown>).tagged = [...current.tagged, ...extra].slice(0, BATCH_MAX);
      }
      // Edited means its text changed; a preview toggle or the files set is not an edit.
      if ('text' in patch && patch.text !== current.text) patch.isEdited = true;
    },
    beforeDelete(ctx, rec) {
      // A lifecycle message (no author) may be deleted by anyone who sees it.
      if (rec.authorId !== null) assertAuthor(ctx, rec, 'deletes');
    },
    beforeRestore(ctx, rec) {
      if (rec.authorId !== null) assertAuthor(ctx, rec, 'restores');
    },
  },
});

/** Only a message's author changes it (403 permission_denied); a lifecycle message has none, so nobody edits it. */
function assertAuthor(ctx: WriteContext, rec: Rec, verb: string): void {
  if (rec.authorId !== ctx.principal.memberId) {
    throw new ProblemError('permission_denied', `Only its author ${verb} a message`, { missingPermissions: ['message author'] });
  }
}

/** What a new message sets off: its chat's lastMessageAt, and an annotation's thread task on the first comment. */
async function afterPosted(ctx: WriteContext, rec: Rec): Promise<void> {
  // Every message of a chat bumps it: posted in it, a reply in it, a comment on one of its files.
  if (typeof rec.accessChatId === 'string') {
    await ctx.repo.update(ctx.registry.get('chat'), ctx.teamId, rec.accessChatId, { lastMessageAt: rec.createdAt });
  }
  if (typeof rec.annotationId === 'string') await openAnnotationThread(ctx, rec.annotationId);
}

/**
 * The first comment on an annotation makes its thread task (spec
 * "Annotation": taskId; "File": annotationTaskId): one task per file, in the
 * file's project, holding every annotation thread of the file. A file
 * outside any project (a chat attachment) has no thread task.
 */
async function openAnnotationThread(ctx: WriteContext, annotationId: string): Promise<void> {
  const annotations = ctx.registry.get('annotation');
  const annotation = await ctx.repo.get(annotations, ctx.teamId, annotationId, { lock: true });
  if (!annotation || annotation.taskId !== null) return;
  const files = ctx.registry.get('file');
  const file = await ctx.repo.get(files, ctx.teamId, annotation.fileId as string, { lock: true, includeTrashed: true });
  // A file in the trash takes no new comments (its annotations stay readable until it is purged).
  if (file && file.purgeAt !== null) throw new ProblemError('resource_not_found', `annotationId: the file of annotation '${annotationId}' is in the trash`, { field: 'annotationId', id: annotationId });
  // A file not every project member sees (a private document's, a chat's) gets no task its name would show.
  if (!file || typeof file.projectId !== 'string' || file.privateDoc === true || file.accessChatId !== null) return;
  const tasks = ctx.registry.get('task');
  let taskId = file.annotationTaskId as string | null;
  if (taskId !== null && !(await ctx.repo.get(tasks, ctx.teamId, taskId))) taskId = null;
  if (taskId === null) {
    // The service names the task, so a file name that looks like spam must not refuse the comment,
    // and a project whose statuses are all archived still gets its thread (in no column).
    const named = `Annotations: ${String(file.name)}`.slice(0, 1024);
    const [status] = await ctx.repo.findWhere(ctx.registry.get('status'), ctx.teamId, { projectId: file.projectId, archived: false }, { orderBy: ['order'], limit: 1 });
    const input: Record<string, unknown> = { name: looksPromotional(named) ? 'Annotations' : named, projectId: file.projectId, statusId: status?.id ?? null };
    await tasks.hooks!.beforeCreate!(ctx, input as never);
    taskId = (await insertRecord(ctx, 'task', input)).id;
    await patchRecord(ctx, files, file, { annotationTaskId: taskId });
  }
  await patchRecord(ctx, annotations, annotation, { taskId });
}

/**
 * Post a message the service writes itself (spec "Message": subtype on
 * server-generated lifecycle messages): no author, announced with
 * message.created. `context` is its one parent (a chat or a task).
 */
export async function postLifecycleMessage(
  ctx: WriteContext, context: { chatId: string } | { taskId: string }, subtype: (typeof MESSAGE_SUBTYPES)[number], text: string,
): Promise<Rec> {
  const res = ctx.registry.get('message');
  const parentField = 'chatId' in context ? 'chatId' : 'taskId';
  const parent = await ctx.repo.get(ctx.registry.get(parentField === 'chatId' ? 'chat' : 'task'), ctx.teamId, (context as Record<string, string>)[parentField]!);
  const reach = parent ? reachOf(parentField, parent, parentField === 'taskId' ? ((parent.projectId as string | null) ?? null) : null) : reachOf('taskId', {} as Rec, null);
  const rec = await newRecord(ctx, res, {
    ...context, ...reach, text, type: 'text', subtype, tagged: [...(mentionsOf(text).get('member') ?? [])], teamId: ctx.teamId,
    authorId: null, isEdited: false, hideLinkPreview: true, botName: null, botAvatar: null,
  });
  await ctx.repo.insert(res, ctx.teamId, rec);
  await afterPosted(ctx, rec);
  await announce(ctx, res, rec, 'created');
  return rec;
}

/**
 * Tasks that moved to another project take what hangs from them along: their
 * files and the files attached to their comments move with them (file.updated;
 * their annotations follow), and every comment on the tasks, those files and
 * annotations, and the replies to them, is judged on the new project from now on.
 */
export async function followTaskMove(ctx: WriteContext, taskIds: readonly string[], projectId: string): Promise<void> {
  if (taskIds.length === 0) return;
  const files = ctx.registry.get('file');
  const annotations = ctx.registry.get('annotation');
  const messages = ctx.registry.get('message');
  const all = { includeTrashed: true };
  const seenFiles = new Set<string>();
  const seenMessages = new Set<string>();
  let level: Rec[] = await ctx.repo.findBy(messages, ctx.teamId, messages.columnOf.taskId!, taskIds, all);
  let moving: Rec[] = await ctx.repo.findBy(files, ctx.teamId, files.columnOf.taskId!, taskIds, all);
  // Files lead to their comments, comments to their replies and attached files, until nothing new turns up.
  while (level.length || moving.length) {
    const freshFiles = moving.filter((f) => !seenFiles.has(f.id));
    for (const file of freshFiles) {
      seenFiles.add(file.id);
      await patchRecord(ctx, files, file, { projectId });
    }
    const fileIds = freshFiles.map((f) => f.id);
    const annotationIds = fileIds.length ? (await ctx.repo.findBy(annotations, ctx.teamId, annotations.columnOf.fileId!, fileIds)).map((a) => a.id) : [];
    const onFiles = fileIds.length ? [
      ...(await ctx.repo.findBy(messages, ctx.teamId, messages.columnOf.fileId!, fileIds, all)),
      ...(await ctx.repo.findBy(messages, ctx.teamId, messages.columnOf.annotationId!, annotationIds, all)),
    ] : [];
    const freshMessages = [...level, ...onFiles].filter((m) => !seenMessages.has(m.id));
    for (const m of freshMessages) {
      seenMessages.add(m.id);
      await ctx.repo.update(messages, ctx.teamId, m.id, { projectId });
    }
    const ids = [...new Set(freshMessages.map((m) => m.id))];
    level = ids.length ? await ctx.repo.findBy(messages, ctx.teamId, messages.columnOf.parentMessageId!, ids, all) : [];
    moving = ids.length ? await ctx.repo.findBy(files, ctx.teamId, files.columnOf.messageId!, ids, all) : [];
  }
}
