import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { chatResource } from '../../resources/chat.resource';
import { createTable, tableOf } from './table';

/** Chats: the table from the declaration; one direct chat per member pair (and one self-chat per member). */
export function chats(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, chatResource.table, tableOf(chatResource)).execute();
      // NULL keys (group and project chats) never collide.
      await db.schema.createIndex('chats_direct_key').on('chats').columns(['team_id', 'direct_key']).unique().execute();
      await db.schema.createIndex('chats_team_last_message').on('chats').columns(['team_id', 'last_message_at', 'id']).execute();
      await db.schema.createIndex('chats_project').on('chats').columns(['project_id']).execute();
    },
  };
}
