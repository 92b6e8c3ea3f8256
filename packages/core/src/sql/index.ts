export type { DialectSupport, SqlStore, JsonColumn } from './dialect';
export { migrate, migrations, tableOf, createTable, backfillDiscussionChats, renameDuplicateFolders, type Cols } from './migrations';
export { Repo, escapeLike, type JsonRow } from './repo';
export { uncachedShapes } from './statement-cache';
