import type { Clock } from '../clock/index';
import type { IdGenerator } from '../ids/index';
import type { Registry } from '../resources/registry';
import type { FileServices } from '../files/service';

export interface EngineConfig {
  registry: Registry;
  clock: Clock;
  ids: IdGenerator;
  /** HMAC key of list cursors. */
  cursorSecret: Uint8Array;
  files: FileServices;
  /** How long a search may run before it answers search_timed_out, ms (routes/search-deadline.ts; default there). */
  searchTimeoutMs?: number;
}
