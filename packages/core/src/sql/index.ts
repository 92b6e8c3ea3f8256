export type { DialectSupport, SqlStore } from './dialect';
export { migrate, migrations } from './migrations';
export { Repo, escapeLike } from './repo';
