import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';

/**
 * Members become manageable over v3 (issue 14): a removed member is trashed
 * (`purge_at`, `deleted_by_id`, as every soft-deleted resource) and every
 * membership says which kind of identity it is (`type`: human, agent or
 * automation; docs/not-shown.md "Members management", "Agents and
 * automations"). Existing members are people. An erased membership says so
 * (`erased_at`): erasure is not undoable.
 */
export function membersAndAgents(d: DialectSupport): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('members').addColumn('purge_at', sql.raw(d.ddl.timestamp)).execute();
      await db.schema.alterTable('members').addColumn('deleted_by_id', sql.raw(d.ddl.id)).execute();
      await db.schema.alterTable('members').addColumn('type', sql.raw(d.ddl.text)).execute();
      // Set when the person is erased (api.admin.erasePerson): the membership can never be reactivated nor get tokens again.
      await db.schema.alterTable('members').addColumn('erased_at', sql.raw(d.ddl.timestamp)).execute();
      await db.updateTable('members').set({ type: 'human' }).execute();
      await db.schema.createIndex('actors_agent').on('actors').columns(['team_id', 'agent_id']).execute();
    },
  };
}
