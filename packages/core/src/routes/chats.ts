import type { CustomRoute } from '../http/routes';
import type { WriteContext } from '../services/context';
import type { OpResult } from '../services/engine';
import { notFound } from '../errors/problem';
import { presentRecord } from '../services/serialize';
import { CHAT_MUTED, selfChat } from '../resources/chat-rooms';

/*
 * Chat operations beyond the standard ones (paths "not shown":
 * docs/not-shown.md "Chats"): the caller's self-chat, and muting a chat for
 * oneself. None is in the event catalog: muting is the member's own setting,
 * not a change of the chat.
 */

/** POST /chats/self: the caller's own chat, 201 when this call made it (with chat.created), else 200. */
async function self(ctx: WriteContext): Promise<OpResult> {
  const { chat, created } = await selfChat(ctx);
  return { status: created ? 201 : 200, body: await presentRecord(ctx, ctx.registry.get('chat'), chat) };
}

/** Mute or unmute a chat the caller is a member of (another's or a missing one is 404); answers the chat. */
async function mute(ctx: WriteContext, id: string, on: boolean): Promise<OpResult> {
  const res = ctx.registry.get('chat');
  const chat = await ctx.repo.get(res, ctx.teamId, id);
  // A project's discussion chat is not served by the chat endpoints (spec "Chat").
  if (!chat || chat.type === 'project') throw notFound('chat', id);
  await ctx.access.assertRecord(res, chat);
  const me = [ctx.principal.memberId];
  if (on) await ctx.repo.addLinks(CHAT_MUTED, ctx.teamId, id, me, ctx.now);
  else await ctx.repo.removeLinks(CHAT_MUTED, id, me);
  return { status: 200, body: await presentRecord(ctx, res, chat) };
}

export const chatRoutes: CustomRoute[] = [
  {
    method: 'POST', path: 'chats/self', scope: { resource: 'chats', action: 'write' }, write: true, noBody: true,
    run: (ctx) => self(ctx),
  },
  {
    method: 'POST', path: 'chats/{id}/mute', scope: { resource: 'chats', action: 'write' }, write: true, subject: 'chat', noBody: true,
    run: (ctx, { params }) => mute(ctx, params.id!, true),
  },
  {
    method: 'POST', path: 'chats/{id}/unmute', scope: { resource: 'chats', action: 'write' }, write: true, subject: 'chat', noBody: true,
    run: (ctx, { params }) => mute(ctx, params.id!, false),
  },
];
