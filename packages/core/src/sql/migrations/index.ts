import { Migrator, type Kysely, type KyselyConfig, type Migration, type MigrationProvider } from 'kysely';
import type { DialectSupport } from '../dialect';
import { foundation } from './0001-foundation';
import { accessAndLimits } from './0002-access-and-limits';
import { webhooks } from './0003-webhooks';
import { oauth } from './0004-oauth';
import { personalAccessTokens } from './0005-personal-access-tokens';
import { checklists } from './0006-checklists';
import { unloggedRateLimits } from './0007-unlogged-rate-limits';
import { documents } from './0008-documents';
import { chats } from './0009-chats';
import { filesAndMessages } from './0010-files-and-messages';
import { projectDashboards } from './0011-project-dashboards';
import { reminders } from './0012-reminders';
import { forms } from './0013-forms';
import { customFields } from './0014-custom-fields';
import { goalsAndTime } from './0015-goals-and-time';
import { recurringRules } from './0016-recurring-rules';
import { checkInsAndCharts } from './0017-check-ins-and-charts';
import { fileOwners } from './0018-file-owners';
import { discussionChats } from './0019-discussion-chats';
import { favorites } from './0020-favorites';
import { foldersHandoffsPresence } from './0021-folders-handoffs-presence';
import { membersAndAgents } from './0022-members-and-agents';
import { projectFolderNames } from './0023-project-folder-names';
import { activityAudience } from './0024-activity-audience';
import { linkOrderIndex } from './0025-link-order-index';
import { labelType } from './0026-label-type';
import { presenceEventMembers } from './0027-presence-event-members';
import { memberlessHumanActors } from './0028-memberless-human-actors';
import { oauthFamilyMacros } from './0029-oauth-family-macros';
import { unnamedTokens } from './0030-unnamed-tokens';
import { linksByParent } from './0031-links-by-parent';

export { tableOf, createTable, type Cols } from './table';
export { backfillDiscussionChats } from './0019-discussion-chats';
export { renameDuplicateFolders } from './0023-project-folder-names';
export { retypeMemberlessHumanActors } from './0028-memberless-human-actors';
export { nameUnnamedTokens } from './0030-unnamed-tokens';
export { narrowOwnerReadAudiences } from './0024-activity-audience';

/**
 * Every migration, in order: one file each in this folder. A new resource's
 * migration creates its table from the declaration, so no column is spelled
 * twice (see 0006-checklists.ts). A fresh database gets today's columns from
 * it; so a later migration that adds a field to that resource must add only
 * the columns a database lacks (older databases), never assume them absent:
 *
 * @example
 * export function notes(d: DialectSupport): Migration {
 *   return { up: (db) => createTable(db, d, noteResource.table, tableOf(noteResource)).execute() };
 * }
 */
export function migrations(d: DialectSupport): Record<string, Migration> {
  return {
    '0001_foundation': foundation(d), '0002_access_and_limits': accessAndLimits(d), '0003_webhooks': webhooks(d), '0004_oauth': oauth(d),
    '0005_personal_access_tokens': personalAccessTokens(d),
    '0006_checklists': checklists(d),
    '0007_unlogged_rate_limits': unloggedRateLimits(d),
    '0008_documents': documents(d),
    '0009_chats': chats(d),
    '0010_files_and_messages': filesAndMessages(d),
    '0011_project_dashboards': projectDashboards(d),
    '0012_reminders': reminders(d),
    '0013_forms': forms(d),
    '0014_custom_fields': customFields(d),
    '0015_goals_and_time': goalsAndTime(d),
    '0016_recurring_rules': recurringRules(d),
    '0017_check_ins_and_charts': checkInsAndCharts(d),
    '0018_file_owners': fileOwners(d),
    '0019_discussion_chats': discussionChats(d),
    '0020_favorites': favorites(d),
    '0021_folders_handoffs_presence': foldersHandoffsPresence(d),
    '0022_members_and_agents': membersAndAgents(d),
    '0023_project_folder_names': projectFolderNames(d),
    '0024_activity_audience': activityAudience(d),
    '0025_link_order_index': linkOrderIndex(),
    '0026_label_type': labelType(d),
    '0027_presence_event_members': presenceEventMembers(),
    '0028_memberless_human_actors': memberlessHumanActors(d),
    '0029_oauth_family_macros': oauthFamilyMacros(d),
    '0030_unnamed_tokens': unnamedTokens(),
    '0031_links_by_parent': linksByParent(),
  };
}

/** Where pmapi's migrations are recorded (the options of migrate, pendingMigrations and previewMigrations). */
export interface MigrateOptions {
  schema?: string;
}

/** The one Migrator every migration function uses: pmapi's migrations and bookkeeping tables. */
function migratorOf(db: Kysely<any>, d: DialectSupport, o: MigrateOptions): Migrator {
  const provider: MigrationProvider = { getMigrations: async () => migrations(d) };
  return new Migrator({
    db, provider, migrationTableName: 'pmapi_migrations', migrationLockTableName: 'pmapi_migrations_lock',
    // Name the schema: kysely looks for its tables across every schema, and another schema's would fool it.
    ...(o.schema ? { migrationTableSchema: o.schema } : {}),
  });
}

/** Apply pending migrations (kysely's Migrator takes the dialect's migration lock); resolves to the names applied, in order. */
export async function migrate(db: Kysely<any>, d: DialectSupport, o: MigrateOptions = {}): Promise<string[]> {
  const { error, results } = await migratorOf(db, d, o).migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The migrations this database has not had yet, in order. Reads only: creates nothing, not even kysely's tables. */
export async function pendingMigrations(db: Kysely<any>, d: DialectSupport, o: MigrateOptions = {}): Promise<string[]> {
  return (await migratorOf(db, d, o).getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/**
 * A database opened with `migrate: false` that is behind: the store refuses to
 * open (requests would fail later on a missing table or column).
 */
export class PendingMigrationsError extends Error {
  override readonly name = 'PendingMigrationsError';
  constructor(readonly pending: readonly string[]) {
    super(
      `pmapi: the database is behind: ${pending.length} pending migration${pending.length === 1 ? '' : 's'} (${pending.join(', ')}). ` +
        'The store was opened with migrate: false, so they were not applied: run `pmapi migrate --db <database>` (package @pmapi/cli), ' +
        'or open the store without migrate: false.',
    );
  }
}

/** Throws PendingMigrationsError, naming them, when the database lacks any of pmapi's migrations (`migrate: false`). */
export async function assertMigrated(db: Kysely<any>, d: DialectSupport, o: MigrateOptions = {}): Promise<void> {
  const pending = await pendingMigrations(db, d, o);
  if (pending.length > 0) throw new PendingMigrationsError(pending);
}

/** pmapi's migrations on one database, without opening a store: what `pmapi migrate` runs (openSqliteMigrations, openPostgresMigrations). */
export interface MigrationRunner {
  /** Names of the migrations the database has not had yet, in order. */
  pending(): Promise<string[]>;
  /** Apply them; resolves to the names applied ([] when up to date). */
  apply(): Promise<string[]>;
  /** The SQL they would run, applying nothing (see previewMigrations). */
  preview(): Promise<MigrationPreview[]>;
  close(): Promise<void>;
}

/** A statement a migration runs, as sent to the database (placeholders and their values). */
export interface MigrationStatement {
  sql: string;
  parameters: readonly unknown[];
}

/** One pending migration and the statements it would run. */
export interface MigrationPreview {
  name: string;
  statements: MigrationStatement[];
}

/**
 * Where a store's Kysely reports the statements it runs (its `log` option
 * calls `statement` when set): how previewMigrations sees them.
 */
export interface MigrationTap {
  statement?: ((s: MigrationStatement) => void) | undefined;
}

/**
 * A store's Kysely `log` option (spread it into the config): `onQuery` gets
 * each statement's SQL and duration, `tap` each statement as sent. Nothing
 * when neither is given.
 */
export function statementLog(onQuery: ((sql: string, durationMs: number) => void) | undefined, tap: MigrationTap | undefined): Pick<KyselyConfig, 'log'> {
  if (!onQuery && !tap) return {};
  return {
    log: (e) => {
      if (e.level !== 'query') return;
      onQuery?.(e.query.sql, e.queryDurationMillis);
      tap?.statement?.({ sql: e.query.sql, parameters: e.query.parameters });
    },
  };
}

/** Thrown inside previewMigrations' transaction so that it always rolls back. */
class PreviewRollback extends Error {}

/**
 * The SQL the pending migrations would run, for review (`pmapi migrate
 * --print`): each pending migration runs, in order, inside one transaction
 * that is always rolled back (DDL is transactional on SQLite and Postgres),
 * while `tap` records every statement. So the statements are exactly what
 * would run against this database now, data-dependent ones included; the
 * database is left as it was. kysely's own bookkeeping (its migration
 * tables) is not shown.
 *
 * @param beforeEach run first inside the transaction, not recorded (Postgres: the migration lock).
 */
export async function previewMigrations(
  db: Kysely<any>,
  d: DialectSupport,
  tap: MigrationTap,
  o: MigrateOptions & { beforeEach?: (trx: Kysely<any>) => Promise<void> } = {},
): Promise<MigrationPreview[]> {
  const pending = (await migratorOf(db, d, o).getMigrations()).filter((m) => m.executedAt === undefined);
  const out: MigrationPreview[] = [];
  try {
    await db.transaction().execute(async (trx) => {
      await o.beforeEach?.(trx);
      for (const { name, migration } of pending) {
        const preview: MigrationPreview = { name, statements: [] };
        tap.statement = (s) => preview.statements.push(s);
        try {
          await migration.up(trx);
        } finally {
          tap.statement = undefined;
        }
        out.push(preview);
      }
      throw new PreviewRollback();
    });
  } catch (err) {
    if (!(err instanceof PreviewRollback)) throw err;
  }
  return out;
}
