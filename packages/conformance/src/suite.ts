import type { StoreFactory } from './kit';
import { smokeSuite } from './suites/smoke';
import { querySuite } from './suites/query';
import { writesSuite } from './suites/writes';
import { authIsolationSuite } from './suites/auth-isolation';
import { softDeleteEventsSuite } from './suites/soft-delete-events';
import { resourcesSuite } from './suites/resources';
import { tasksSuite } from './suites/tasks';
import { hardeningSuite } from './suites/hardening';
import { concurrencySuite } from './suites/concurrency';

/** Every conformance suite, against one store factory. */
export function runConformance(factory: StoreFactory): void {
  smokeSuite(factory);
  querySuite(factory);
  writesSuite(factory);
  authIsolationSuite(factory);
  softDeleteEventsSuite(factory);
  resourcesSuite(factory);
  tasksSuite(factory);
  hardeningSuite(factory);
  concurrencySuite(factory);
}
