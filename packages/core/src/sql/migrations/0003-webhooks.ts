import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { common, createTable, soft } from './table';

/** Webhooks: registrations, the delivery queue (one job per webhook and event) and the delivery log. */
export function webhooks(d: DialectSupport): Migration {
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

