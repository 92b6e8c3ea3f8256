import type { StoreFactory } from './kit';
import { smokeSuite } from './suites/smoke';
import { querySuite } from './suites/query';
import { writesSuite } from './suites/writes';
import { authIsolationSuite } from './suites/auth-isolation';
import { softDeleteEventsSuite } from './suites/soft-delete-events';
import { resourcesSuite } from './suites/resources';
import { tasksSuite } from './suites/tasks';
import { hardeningSuite } from './suites/hardening';
import { hardeningInputSuite } from './suites/hardening-input';
import { fuzzRoutesSuite } from './suites/fuzz-routes';
import { concurrencySuite } from './suites/concurrency';
import { personalAccessTokensSuite } from './suites/personal-access-tokens';
import { rateLimitsSuite } from './suites/rate-limits';
import { rolesSuite } from './suites/roles';
import { projectAccessSuite } from './suites/project-access';
import { routeTableSuite } from './suites/route-table';
import { accessReviewSuite } from './suites/access-review';
import { webhooksSuite } from './suites/webhooks';
import { oauthSuite } from './suites/oauth';
import { registrySuite } from './suites/registry-generated';

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
  hardeningInputSuite(factory);
  fuzzRoutesSuite(factory);
  concurrencySuite(factory);
  personalAccessTokensSuite(factory);
  rateLimitsSuite(factory);
  rolesSuite(factory);
  projectAccessSuite(factory);
  routeTableSuite(factory);
  accessReviewSuite(factory);
  webhooksSuite(factory);
  oauthSuite(factory);
  registrySuite(factory);
}
