import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { fileResource } from '../../resources/file.resource';
import { annotationResource } from '../../resources/annotation.resource';
import { messageResource } from '../../resources/message.resource';
import { createTable, tableOf } from './table';

/**
 * Files, annotations and messages: tables from the declarations; pending
 * uploads; the file job queue (post-processing, removal of bytes); and a
 * per-workspace storage quota (null: the API's default).
 */
export function filesAndMessages(d: DialectSupport): Migration {
  return {
    async up(db) {
      const idx = (name: string, table: string, cols: string[]) => db.schema.createIndex(name).on(table).columns(cols).execute();
      // owner_id came later: 0018 adds it to every database, this one's too.
      const { 'owner_id?': _later, ...fileCols } = tableOf(fileResource);
      await createTable(db, d, fileResource.table, fileCols).execute();
      await idx('files_team_created', 'files', ['team_id', 'created_at', 'id']);
      await idx('files_project_created', 'files', ['project_id', 'created_at', 'id']);
      for (const c of ['task_id', 'document_id', 'message_id', 'folder_id']) await idx(`files_${c}`, 'files', [c]);
      await createTable(db, d, annotationResource.table, tableOf(annotationResource)).execute();
      await idx('annotations_file', 'annotations', ['file_id', 'created_at', 'id']);
      await createTable(db, d, messageResource.table, tableOf(messageResource)).execute();
      await idx('messages_team_created', 'messages', ['team_id', 'created_at', 'id']);
      for (const c of ['chat_id', 'task_id', 'document_id', 'file_id', 'annotation_id', 'parent_message_id']) {
        await idx(`messages_${c}`, 'messages', [c, 'created_at', 'id']);
      }
      await createTable(db, d, 'file_uploads', {
        id: 'id', team_id: 'id', member_id: 'id', blob_key: 'text', size: 'bigint', expires_at: 'timestamp', 'used_at?': 'timestamp', created_at: 'timestamp',
      }).execute();
      await idx('file_uploads_expiry', 'file_uploads', ['expires_at']);
      await idx('file_uploads_blob', 'file_uploads', ['blob_key']);
      await createTable(db, d, 'file_jobs', {
        id: 'id', team_id: 'id', kind: 'text', 'file_id?': 'id', blob_key: 'text', status: 'text', attempts: 'integer',
        next_attempt_at: 'timestamp', 'lease_until?': 'timestamp', 'lease_token?': 'text', 'last_error?': 'text',
        created_at: 'timestamp', updated_at: 'timestamp',
      }).execute();
      await idx('file_jobs_due', 'file_jobs', ['status', 'next_attempt_at']);
      await db.schema.alterTable('workspaces').addColumn('storage_quota_bytes', sql.raw(d.ddl.bigint)).execute();
    },
  };
}
