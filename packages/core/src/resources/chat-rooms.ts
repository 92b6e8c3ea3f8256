import type { Rec } from './define-resource';
import type { WriteContext } from './hooks';
import { fieldError } from './rules';
import { announce, newRecord } from '../services/records';

/*
 * The chats the service makes itself (spec "Chat"): the 1:1 chat a first
 * message with recipientMemberId opens, each member's self-chat, and a
 * project's discussion chat with its members kept in step with the roster;
 * and the link kinds that hold chat membership. The declaration is in
 * chat.resource.ts.
 */

/** A chat's members: parent the chat, related the member, made when they joined. */
export const CHAT_MEMBERS = 'chat.members';
/** The members among them who own the chat (the creator of a group chat; both members of a direct chat). */
export const CHAT_OWNERS = 'chat.owners';
/** The members who muted the chat. */
export const CHAT_MUTED = 'chat.muted';

/** The key of the 1:1 chat of a member with `other`: the pair's ids sorted and joined by `:`, or `self:{id}` for themself. */
export function directKey(other: string, memberId: string): string {
  return other === memberId ? `self:${memberId}` : [memberId, other].sort().join(':');
}

/** An active member of the workspace, or 404 naming the field. */
export async function activeMember(ctx: WriteContext, id: string, field: string): Promise<Rec> {
  const m = await ctx.mustGet('member', id, field);
  if (m.active === false) throw fieldError(field, 'inactive_member', `member ${id} is not active`);
  return m;
}

/** Create a chat row with its members and owners, announced with chat.created. */
async function openChat(ctx: WriteContext, values: Record<string, unknown>, members: string[], owners: string[]): Promise<Rec> {
  const res = ctx.registry.get('chat');
  const rec = await newRecord(ctx, res, { teamId: ctx.teamId, createdById: ctx.principal.memberId, ...values });
  await ctx.repo.insert(res, ctx.teamId, rec);
  await ctx.repo.addLinks(CHAT_MEMBERS, ctx.teamId, rec.id, members, ctx.now);
  await ctx.repo.addLinks(CHAT_OWNERS, ctx.teamId, rec.id, owners, ctx.now);
  await announce(ctx, res, rec, 'created');
  return rec;
}

/**
 * The 1:1 chat of the caller and `recipientId`, created on first use and
 * reused afterwards (spec "Message": recipientMemberId). Both members own it.
 * The recipient must be another active member of the workspace.
 */
export async function directChat(ctx: WriteContext, recipientId: string): Promise<{ chat: Rec; created: boolean }> {
  const me = ctx.principal.memberId;
  if (recipientId === me) throw fieldError('recipientMemberId', 'self_recipient', 'must be another member than the caller');
  await activeMember(ctx, recipientId, 'recipientMemberId');
  const pair = [me, recipientId].sort();
  // One creator per pair at a time: lock both members in a fixed order.
  const members = ctx.registry.get('member');
  for (const id of pair) await ctx.repo.get(members, ctx.teamId, id, { lock: true });
  const key = directKey(recipientId, me);
  const [found] = await ctx.repo.findWhere(ctx.registry.get('chat'), ctx.teamId, { directKey: key }, { limit: 1 });
  if (found) return { chat: found, created: false };
  return { chat: await openChat(ctx, { type: 'direct', name: null, description: null, directKey: key }, pair, pair), created: true };
}

/** The caller's own chat (notes to self), created on first use. */
export async function selfChat(ctx: WriteContext): Promise<{ chat: Rec; created: boolean }> {
  const me = ctx.principal.memberId;
  await ctx.repo.get(ctx.registry.get('member'), ctx.teamId, me, { lock: true });
  const key = directKey(me, me);
  const [found] = await ctx.repo.findWhere(ctx.registry.get('chat'), ctx.teamId, { directKey: key }, { limit: 1 });
  if (found) return { chat: found, created: false };
  return { chat: await openChat(ctx, { type: 'direct', name: null, description: null, directKey: key }, [me], [me]), created: true };
}

/**
 * A project's discussion chat (spec "Project": discussionChatId), made with
 * the project when its modules include discussion. Its members are the
 * project's: the owner and the roster, kept in step by {@link syncDiscussion}.
 */
export async function openDiscussion(ctx: WriteContext, project: Rec): Promise<Rec> {
  const roster = (await ctx.repo.linksOf('project.members', [project.id])).get(project.id) ?? [];
  const owner = typeof project.ownerId === 'string' ? [project.ownerId] : [];
  return openChat(ctx, { type: 'project', name: null, description: null, projectId: project.id }, [...new Set([...owner, ...roster])], owner);
}

/** Members added to or removed from a project's roster join or leave its discussion chat (the owner stays). */
export async function syncDiscussion(ctx: WriteContext, project: Rec, added: readonly string[], removed: readonly string[]): Promise<void> {
  const chatId = project.discussionChatId;
  if (typeof chatId !== 'string') return;
  await ctx.repo.addLinks(CHAT_MEMBERS, ctx.teamId, chatId, added, ctx.now);
  const leaving = removed.filter((id) => id !== project.ownerId);
  await ctx.repo.removeLinks(CHAT_MEMBERS, chatId, leaving);
  for (const id of leaving) await ctx.repo.removeLinks(CHAT_MUTED, chatId, [id]);
}
