/** Types of test/pack-smoke.mjs (a plain Node script, also run by hand and in CI). */
export declare const ROOT: string;
export declare const PUBLISHED: readonly string[];
export declare function entryPoints(dir: string): string[];
export declare function packAll(dest: string): string[];
export interface SmokeAnswer { status: number; names: string[]; handler: string; webhooks: number; /** @pmapi/testing: the project create as t.a.owner, its name, typeof runJobs().purge.purged. */ testing: { status: number; name: string; ran: string } }
export declare function packSmoke(o?: { keep?: boolean; log?: (m: string) => void }): {
  app: string;
  installed: string[];
  coreCopies: string[];
  cjs: SmokeAnswer;
  esm: SmokeAnswer;
  /** The installed `pmapi` bin: migrations applied to a new SQLite file, its last line, and the last line run again. */
  cli: { applied: number; last: string; again: string };
};
