import { sql, Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { DialectSupport } from './dialect';
import type { StorageKind } from '../resources/fields';

type Kind = StorageKind | 'id' | 'bigint';
/** `name: kind` with `?` for nullable, e.g. `'due_at?': 'timestamp'`. */
type Cols = Record<string, Kind>;

const common: Cols = {
  id: 'id',
  team_id: 'id',
  created_at: 'timestamp',
  updated_at: 'timestamp',
  'created_by_actor_id?': 'id',
  'updated_by_actor_id?': 'id',
  'created_by_actor_type?': 'text',
  'updated_by_actor_type?': 'text',
};
const soft: Cols = { 'purge_at?': 'timestamp', 'deleted_by_id?': 'id' };

function createTable(db: Kysely<any>, d: DialectSupport, name: string, cols: Cols, pk: string[] = ['id']) {
  let t = db.schema.createTable(name);
  for (const [raw, kind] of Object.entries(cols)) {
    const nullable = raw.endsWith('?');
    const col = nullable ? raw.slice(0, -1) : raw;
    t = t.addColumn(col, sql.raw(d.ddl[kind]), (c) => (nullable ? c : c.notNull()));
  }
  return t.addPrimaryKeyConstraint(`${name}_pk`, pk as any);
}

/** The first schema: workspaces, people, tokens and the core project resources. */
function foundation(d: DialectSupport): Migration {
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

/** Access control and limits: rate-limit counters and blocks shared by every process. */
function accessAndLimits(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, 'rate_counters', { key: 'text', window_start: 'bigint', count: 'bigint' }, ['key', 'window_start']).execute();
      await createTable(db, d, 'rate_blocks', { key: 'text', until: 'bigint' }, ['key']).execute();
      await db.schema.alterTable('access_tokens').addColumn('last_used_at', sql.raw(d.ddl.timestamp)).execute();
    },
  };
}

/** Webhooks: registrations, the delivery queue (one job per webhook and event) and the delivery log. */
function webhooks(d: DialectSupport): Migration {
  return {
    async up(db) {
      const idx = (name: string, table: string, cols: string[]) => db.schema.createIndex(name).on(table).columns(cols).execute();
      await createTable(db, d, 'webhooks', {
        ...common, ...soft, 'name?': 'text', url: 'text', events: 'json', api_version: 'text', active: 'boolean',
        fail_count: 'integer', secret: 'text', 'last_delivered_at?': 'timestamp', 'created_by_id?': 'id',
      }).execute();
      await idx('webhooks_team_created', 'webhooks', ['team_id', 'created_at', 'id']);
      // id = `${webhookId}:${eventId}`: publishing twice is a no-op.
      await createTable(db, d, 'webhook_jobs', {
        id: 'text', team_id: 'id', webhook_id: 'id', event_id: 'id', event_type: 'text', attempts: 'integer',
        status: 'text', next_attempt_at: 'timestamp', 'lease_until?': 'timestamp', 'lease_token?': 'text',
        created_at: 'timestamp', updated_at: 'timestamp',
      }).execute();
      await idx('webhook_jobs_due', 'webhook_jobs', ['status', 'next_attempt_at']);
      await idx('webhook_jobs_webhook', 'webhook_jobs', ['webhook_id']);
      await createTable(db, d, 'webhook_deliveries', {
        id: 'id', team_id: 'id', webhook_id: 'id', event_type: 'text', status: 'text', 'response_status?': 'integer',
        duration_ms: 'integer', 'error?': 'text', created_at: 'timestamp',
      }).execute();
      await idx('webhook_deliveries_log', 'webhook_deliveries', ['webhook_id', 'created_at', 'id']);
      await idx('webhook_deliveries_age', 'webhook_deliveries', ['created_at']);
    },
  };
}

/**
 * The OAuth 2.1 authorization server: registered clients, refresh-token
 * families (one per consent; the scope ceiling), authorization codes and
 * refresh tokens (stored as SHA-256 digests, consumed atomically). Access
 * tokens live in `access_tokens` (kind 'oauth') with their family and client.
 */
function oauth(d: DialectSupport): Migration {
  return {
    async up(db) {
      const idx = (name: string, table: string, cols: string[]) => db.schema.createIndex(name).on(table).columns(cols).execute();
      await createTable(db, d, 'oauth_clients', {
        id: 'id', 'team_id?': 'id', name: 'text', type: 'text', 'secret_hash?': 'text', redirect_uris: 'json',
        'revoked_at?': 'timestamp', created_at: 'timestamp',
      }).execute();
      await createTable(db, d, 'oauth_families', {
        id: 'id', client_id: 'id', member_id: 'id', team_id: 'id', scopes: 'json', 'revoked_at?': 'timestamp', created_at: 'timestamp',
      }).execute();
      await idx('oauth_families_client', 'oauth_families', ['client_id']);
      await createTable(db, d, 'oauth_codes', {
        hash: 'text', client_id: 'id', family_id: 'id', redirect_uri: 'text', code_challenge: 'text',
        expires_at: 'timestamp', 'consumed_at?': 'timestamp', created_at: 'timestamp',
      }, ['hash']).execute();
      await idx('oauth_codes_expiry', 'oauth_codes', ['expires_at']);
      await createTable(db, d, 'oauth_refresh_tokens', {
        hash: 'text', family_id: 'id', client_id: 'id', expires_at: 'timestamp', 'consumed_at?': 'timestamp', created_at: 'timestamp',
      }, ['hash']).execute();
      await idx('oauth_refresh_tokens_family', 'oauth_refresh_tokens', ['family_id']);
      await db.schema.alterTable('access_tokens').addColumn('family_id', sql.raw(d.ddl.id)).execute();
      await db.schema.alterTable('access_tokens').addColumn('client_id', sql.raw(d.ddl.id)).execute();
      await idx('access_tokens_family', 'access_tokens', ['family_id']);
    },
  };
}

/** Every migration, in order. Later issues append here. */
export function migrations(d: DialectSupport): Record<string, Migration> {
  return { '0001_foundation': foundation(d), '0002_access_and_limits': accessAndLimits(d), '0003_webhooks': webhooks(d), '0004_oauth': oauth(d) };
}

/** Apply pending migrations (kysely's Migrator takes the dialect's migration lock). */
export async function migrate(db: Kysely<any>, d: DialectSupport, o: { schema?: string } = {}): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(d) };
  const migrator = new Migrator({
    db, provider, migrationTableName: 'pmapi_migrations', migrationLockTableName: 'pmapi_migrations_lock',
    // Name the schema: kysely looks for its tables across every schema, and another schema's would fool it.
    ...(o.schema ? { migrationTableSchema: o.schema } : {}),
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}
