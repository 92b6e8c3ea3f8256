import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { createTable } from './table';

/**
 * The OAuth 2.1 authorization server: registered clients, refresh-token
 * families (one per consent; the scope ceiling), authorization codes and
 * refresh tokens (stored as SHA-256 digests, consumed atomically). Access
 * tokens live in `access_tokens` (kind 'oauth') with their family and client.
 */
export function oauth(d: DialectSupport): Migration {
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

