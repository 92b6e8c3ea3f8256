export type { DialectSupport, SqlStore, JsonColumn } from './dialect';
export { limitOf } from './dialect';
export { migrate, migrations, pendingMigrations, previewMigrations, assertMigrated, PendingMigrationsError, type MigrationRunner, type MigrateOptions, type MigrationPreview, type MigrationStatement, type MigrationTap, statementLog, tableOf, createTable, backfillDiscussionChats, renameDuplicateFolders, narrowOwnerReadAudiences, retypeMemberlessHumanActors, nameUnnamedTokens, type Cols } from './migrations';
export { Repo, escapeLike, type JsonRow } from './repo';
export { uncachedShapes, executeTogether, holdStatement, sendHeld, runDirectly, execute, type DirectRun, type TogetherConnection, type HoldingConnection } from './statement-cache';
export { ACTIVITY_SCAN_BUDGET, ACTIVITY_COUNT_BUDGET } from './queries/activity';
export { TOKEN_TABLES } from './queries/tokens';
// Store openers refuse option names they do not know (issue 16 Operable: typos are not accepted).
export { checkOptionNames } from '../options';
