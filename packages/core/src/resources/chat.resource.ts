import { z } from 'zod';
import { defineResource, RANGE, type Rec } from './define-resource';
import { BATCH_MAX, f } from './fields';
import type { ReadContext } from './hooks';
import { fieldError } from './rules';
import { ProblemError } from '../errors/problem';
import { iso } from '../clock/index';
import { postLifecycleMessage } from './message.resource';
import { destroyDependants } from '../services/records';
import { activeMember, CHAT_MEMBERS, CHAT_MUTED, CHAT_OWNERS, directKey } from './chat-rooms';

/*
 * Chats (spec "Chat"): group chats made with POST /chats, direct 1:1 chats
 * made by the first message with recipientMemberId, each member's own
 * self-chat, and one discussion chat per project with the discussion module
 * (never served by the chat list or get). Members see their chats and nobody
 * else does. Decisions where the spec is silent: docs/not-shown.md "Chats".
 */

export const CHAT_TYPES = ['group', 'direct', 'project'] as const;
export const CHAT_NAME_MAX = 255;
export const CHAT_DESCRIPTION_MAX = 5000;
const ID = z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64);

/** The member entries of chats (expand `members`): member id, owner and muted flags, and when they joined. */
async function memberEntries(ctx: ReadContext, recs: readonly Rec[]): Promise<Map<string, unknown[]>> {
  const ids = recs.map((r) => r.id);
  const [members, owners, muted] = await Promise.all([
    ctx.repo.linkRows(CHAT_MEMBERS, ids),
    ctx.repo.linksOf(CHAT_OWNERS, ids),
    ctx.repo.linksOf(CHAT_MUTED, ids),
  ]);
  const out = new Map<string, unknown[]>();
  for (const m of members) {
    const entry = {
      memberId: m.relatedId,
      owner: owners.get(m.parentId)?.includes(m.relatedId) ?? false,
      muted: muted.get(m.parentId)?.includes(m.relatedId) ?? false,
      joinedAt: iso(m.createdAt),
    };
    const list = out.get(m.parentId);
    if (list) list.push(entry);
    else out.set(m.parentId, [entry]);
  }
  return out;
}

/** Chats: group, direct and project discussions; hard-deleted with all their messages. */
export const chatResource = defineResource({
  name: 'chat',
  path: 'chats',
  policy: { regular: ['read', 'write', 'delete'], client: ['read', 'write'] },
  fields: {
    type: f.enum(CHAT_TYPES, { mode: 'createOnly' }),
    name: f.string({ trim: true, min: 1, max: CHAT_NAME_MAX, nullable: true }),
    description: f.string({ max: CHAT_DESCRIPTION_MAX, nullable: true }),
    memberIds: f.json(z.array(ID).max(BATCH_MAX, `must hold at most ${BATCH_MAX} ids`), { mode: 'createOnly', writeOnly: true, nullable: true }),
    teamId: f.readOnly('text', { column: 'team_id' }),
    projectId: f.readOnly('text', { nullable: true }),
    pinnedMessageId: f.readOnly('text', { nullable: true }),
    lastMessageAt: f.readOnly('timestamp', { nullable: true }),
    createdById: f.readOnly('text', { nullable: true, internal: true }),
    /** Direct chats: the two member ids, sorted, joined by `:` (one chat per pair); self-chats: `self:{memberId}`. */
    directKey: f.readOnly('text', { nullable: true, internal: true }),
  },
  membersOnly: { links: CHAT_MEMBERS },
  unlisted: { field: 'type', value: 'project' },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    type: { ops: ['eq', 'in'] },
    lastMessageAt: { ops: RANGE },
    createdAt: { ops: RANGE },
    // The caller's 1:1 chat with that member (their self-chat for their own id).
    recipientMemberId: { ops: ['eq'], derive: { field: 'directKey', value: directKey } },
  },
  defaultSort: 'lastMessageAt',
  expand: {
    project: { kind: 'one', target: 'project', field: 'projectId' },
    members: { kind: 'entries', load: memberEntries },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      if (input.type !== undefined && input.type !== 'group') {
        throw fieldError('type', 'invalid_value', 'POST /chats creates group chats only; a direct chat starts with a message to recipientMemberId');
      }
      input.type = 'group';
      if (typeof input.name !== 'string') throw fieldError('name', 'required', 'a group chat needs a name');
      const others = [...new Set(input.memberIds ?? [])].filter((id) => id !== ctx.principal.memberId);
      for (const id of others) await activeMember(ctx, id, 'memberIds');
      input.memberIds = others;
      input.teamId = ctx.teamId;
      input.createdById = ctx.principal.memberId;
    },
    async afterCreate(ctx, rec) {
      const me = ctx.principal.memberId;
      await ctx.repo.addLinks(CHAT_MEMBERS, ctx.teamId, rec.id, [me, ...(rec.memberIds ?? [])], ctx.now);
      await ctx.repo.addLinks(CHAT_OWNERS, ctx.teamId, rec.id, [me], ctx.now);
      // The member list is written once, as links; the column keeps nothing.
      await ctx.repo.update(ctx.registry.get('chat'), ctx.teamId, rec.id, { memberIds: null });
      await postLifecycleMessage(ctx, { chatId: rec.id }, 'hello', `<@${me}> created the chat`);
    },
    beforeUpdate(_ctx, current, patch) {
      if (current.type !== 'group' && patch.name !== undefined && patch.name !== current.name) {
        throw fieldError('name', 'not_allowed', 'only a group chat has a name');
      }
      if (current.type === 'group' && patch.name === null) throw fieldError('name', 'required', 'a group chat needs a name');
    },
    async beforeDelete(ctx, rec) {
      if (!(await ctx.repo.linkedTo(CHAT_OWNERS, [rec.id], ctx.principal.memberId)).has(rec.id)) {
        throw new ProblemError('permission_denied', 'Only an owner of the chat may delete it', { missingPermissions: ['chat owner'] });
      }
    },
    async beforeDestroy(ctx, rec) {
      // The messages go first, while the membership that decides who hears of their removal is still there.
      await destroyDependants(ctx, ctx.registry.get('chat'), [rec.id]);
      await ctx.repo.dropLinks({ kinds: [CHAT_MEMBERS, CHAT_OWNERS, CHAT_MUTED], parentIds: [rec.id] });
    },
  },
});

