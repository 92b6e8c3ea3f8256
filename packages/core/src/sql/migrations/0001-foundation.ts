import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { common, createTable, soft } from './table';

/** The first schema: workspaces, people, tokens and the core project resources. */
export function foundation(d: DialectSupport): Migration {
  return {
    async up(db) {
      const idx = (name: string, table: string, cols: string[]) => db.schema.createIndex(name).on(table).columns(cols).execute();
      await createTable(db, d, 'workspaces', {
        id: 'id', name: 'text', timezone: 'text', 'owner_member_id?': 'id', allow_completing_blocked_tasks: 'boolean',
        created_at: 'timestamp', updated_at: 'timestamp',
      }).execute();
      await createTable(db, d, 'users', { id: 'id', name: 'text', 'email?': 'text', created_at: 'timestamp' }).execute();
      await createTable(db, d, 'roles', {
        ...common, name: 'text', editable: 'boolean', permissions: 'json', 'initial_screen?': 'text',
      }).execute();
      await db.schema.createIndex('roles_team_name').unique().on('roles').columns(['team_id', 'name']).execute();
      await createTable(db, d, 'members', {
        ...common, user_id: 'id', name: 'text', 'email?': 'text', role_id: 'id', role: 'text', active: 'boolean',
      }).execute();
      await idx('members_team_created', 'members', ['team_id', 'created_at', 'id']);
      await idx('members_user', 'members', ['user_id']);
      await createTable(db, d, 'actors', {
        ...common, type: 'text', display_name: 'text', 'member_id?': 'id', 'agent_id?': 'id', 'tombstoned_at?': 'timestamp',
      }).execute();
      await db.schema.createIndex('actors_member').unique().on('actors').columns(['team_id', 'member_id']).execute();
      await createTable(db, d, 'access_tokens', {
        id: 'id', team_id: 'id', member_id: 'id', kind: 'text', prefix: 'text', hash: 'text', scopes: 'json', 'name?': 'text',
        'expires_at?': 'timestamp', 'revoked_at?': 'timestamp', created_at: 'timestamp',
      }).execute();
      await db.schema.createIndex('access_tokens_prefix').unique().on('access_tokens').columns(['prefix']).execute();
      await idx('access_tokens_member', 'access_tokens', ['member_id']);

      await createTable(db, d, 'portfolios', {
        ...common, ...soft, name: 'text', 'icon?': 'text', initials: 'text', color: 'text', secondary_color: 'text',
        is_general: 'boolean', order: 'number', owner_id: 'id',
      }).execute();
      await idx('portfolios_team_order', 'portfolios', ['team_id', 'order', 'id']);
      await createTable(db, d, 'projects', {
        ...common, ...soft, name: 'text', 'description?': 'text', 'icon?': 'text', initials: 'text', color: 'text',
        secondary_color: 'text', portfolio_id: 'id', access_type: 'text', modules: 'json', 'default_tasks_view?': 'text',
        'hidden_list_columns?': 'json', 'list_columns_order?': 'json', 'custom_fields_order?': 'json',
        'task_custom_fields_order?': 'json', 'list_custom_fields_order?': 'json', auto_milestones: 'boolean',
        'estimation_unit?': 'text', hide_users_from_guests: 'boolean', subtask_status_enabled: 'boolean',
        query_all_files: 'boolean', 'project_folder_id?': 'id', 'custom_fields?': 'json', archived: 'boolean',
        nice_id: 'text', 'owner_id?': 'id', 'discussion_chat_id?': 'id', order: 'number', task_counter: 'bigint',
      }).execute();
      await idx('projects_team_order', 'projects', ['team_id', 'order', 'id']);
      await idx('projects_portfolio', 'projects', ['portfolio_id']);
      await db.schema.createIndex('projects_portfolio_name_live').unique().on('projects')
        .columns(['portfolio_id', 'name']).where(sql.ref('purge_at'), 'is', null).execute();
      await db.schema.createIndex('projects_team_nice_id').unique().on('projects').columns(['team_id', 'nice_id']).execute();
      await createTable(db, d, 'statuses', {
        ...common, name: 'text', project_id: 'id', 'color?': 'text', order: 'number', archived: 'boolean',
      }).execute();
      await idx('statuses_project_order', 'statuses', ['project_id', 'order', 'id']);
      await idx('statuses_team_updated', 'statuses', ['team_id', 'updated_at', 'id']);
      await createTable(db, d, 'lists', {
        ...common, 'name?': 'text', project_id: 'id', 'description?': 'text', 'start?': 'timestamp', 'end?': 'timestamp',
        order: 'number', color: 'text', archived: 'boolean', is_milestone: 'boolean', 'dependency_id?': 'id',
        'status_id?': 'id', 'recurring_rule_id?': 'id', 'custom_fields?': 'json',
      }).execute();
      await idx('lists_project_order', 'lists', ['project_id', 'order', 'id']);
      await idx('lists_team_updated', 'lists', ['team_id', 'updated_at', 'id']);
      await createTable(db, d, 'labels', {
        ...common, name: 'text', 'color?': 'text', is_default: 'boolean',
      }).execute();
      await idx('labels_team_name', 'labels', ['team_id', 'name', 'id']);
      await createTable(db, d, 'tasks', {
        ...common, name: 'text', project_id: 'id', 'description?': 'text', archived: 'boolean', 'archived_at?': 'timestamp',
        'archived_by_id?': 'id', completed: 'boolean', 'completed_at?': 'timestamp', 'completed_by_id?': 'id',
        'list_id?': 'id', 'status_id?': 'id', 'parent_task_id?': 'id', 'dependency_id?': 'id', 'recurring_rule_id?': 'id',
        'start_at?': 'timestamp', 'due_at?': 'timestamp', 'remind_at?': 'timestamp', 'story_points?': 'number',
        'estimate?': 'number', order: 'number', 'order_list?': 'number', 'banner?': 'text', 'embed_url?': 'text',
        'custom_fields?': 'json', nice_id: 'text', 'created_by_id?': 'id',
      }).execute();
      await idx('tasks_project_order', 'tasks', ['project_id', 'order', 'id']);
      await idx('tasks_team_updated', 'tasks', ['team_id', 'updated_at', 'id']);
      await idx('tasks_parent', 'tasks', ['parent_task_id']);
      await idx('tasks_list', 'tasks', ['list_id']);
      await idx('tasks_status', 'tasks', ['status_id']);
      await idx('tasks_dependency', 'tasks', ['dependency_id']);
      await db.schema.createIndex('tasks_sibling_order').unique().on('tasks')
        .columns(['parent_task_id', 'order']).where(sql.ref('parent_task_id'), 'is not', null).execute();
      await db.schema.createIndex('tasks_project_nice_id').unique().on('tasks').columns(['project_id', 'nice_id']).execute();

      await createTable(db, d, 'links', {
        kind: 'text', parent_id: 'id', related_id: 'id', team_id: 'id', created_at: 'timestamp',
      }, ['kind', 'parent_id', 'related_id']).execute();
      await idx('links_related', 'links', ['kind', 'related_id']);
      await createTable(db, d, 'outbox', {
        id: 'id', team_id: 'id', type: 'text', aggregate_type: 'text', aggregate_id: 'id', 'project_id?': 'id',
        body: 'json', created_at: 'timestamp', 'dispatched_at?': 'timestamp',
      }).execute();
      await idx('outbox_pending', 'outbox', ['dispatched_at', 'created_at']);
      await createTable(db, d, 'idempotency_keys', {
        scope: 'text', key: 'text', fingerprint: 'text', 'status?': 'integer', 'response?': 'json', created_at: 'timestamp',
      }, ['scope', 'key']).execute();
      await idx('idempotency_created', 'idempotency_keys', ['created_at']);
      await createTable(db, d, 'secrets', { name: 'text', value: 'text' }, ['name']).execute();
    },
  };
}

