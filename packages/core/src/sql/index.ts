export type { DialectSupport, SqlStore } from './dialect';
export { migrate, migrations, tableOf, createTable, type Cols } from './migrations';
export { Repo, escapeLike } from './repo';
