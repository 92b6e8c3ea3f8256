import type { Kysely, Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { randomIds } from '../../ids/index';
import { chatResource } from '../../resources/chat.resource';

const BATCH = 500;
/** The link kinds of chat membership (resources/chat-rooms.ts), as they were when this migration was written. */
const CHAT_MEMBERS = 'chat.members';
const CHAT_OWNERS = 'chat.owners';

/**
 * Every project with the discussion module has its discussion chat (spec
 * "Project": discussionChatId). Projects made before chats existed (0009)
 * get theirs here: a `project` chat whose members are the owner and the
 * roster, owned by the owner, stamped with the project's creation time (the
 * migration writes no events: nothing happened that a webhook should hear).
 */
export function discussionChats(d: DialectSupport): Migration {
  return {
    async up(db) {
      await backfillDiscussionChats(db, d);
    },
  };
}

/** Give each project with the discussion module and no discussion chat its chat; returns how many were made. */
export async function backfillDiscussionChats(db: Kysely<any>, d: DialectSupport): Promise<number> {
  let made = 0;
  let after = '';
  for (;;) {
    const projects = await db.selectFrom('projects').select(['id', 'team_id', 'owner_id', 'modules', 'created_at'])
      .where('discussion_chat_id', 'is', null).where('id', '>', after).orderBy('id').limit(BATCH).execute();
    if (projects.length === 0) return made;
    after = projects[projects.length - 1]!.id as string;
    for (const p of projects) {
      const modules = d.decode('json', p.modules) as unknown;
      if (!Array.isArray(modules) || !modules.includes('discussion')) continue;
      const roster = (await db.selectFrom('links').select('related_id').where('kind', '=', 'project.members').where('parent_id', '=', p.id).execute()).map((r) => r.related_id as string);
      const owner = typeof p.owner_id === 'string' ? [p.owner_id] : [];
      const chatId = randomIds.id();
      const row: Record<string, unknown> = {};
      for (const c of chatResource.columns) row[c.column] = null;
      Object.assign(row, {
        id: chatId, team_id: p.team_id, created_at: p.created_at, updated_at: p.created_at,
        type: 'project', project_id: p.id, created_by_id: owner[0] ?? null,
      });
      await db.insertInto('chats').values(row).execute();
      const links = [
        ...[...new Set([...owner, ...roster])].map((m) => ({ kind: CHAT_MEMBERS, parent_id: chatId, related_id: m, team_id: p.team_id, created_at: p.created_at })),
        ...owner.map((m) => ({ kind: CHAT_OWNERS, parent_id: chatId, related_id: m, team_id: p.team_id, created_at: p.created_at })),
      ];
      if (links.length) await db.insertInto('links').values(links).execute();
      await db.updateTable('projects').set({ discussion_chat_id: chatId }).where('id', '=', p.id).execute();
      made++;
    }
  }
}
