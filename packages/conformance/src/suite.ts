import type { StoreFactory } from './kit';
import { smokeSuite } from './suites/smoke';

/** Every conformance suite, against one store factory. */
export function runConformance(factory: StoreFactory): void {
  smokeSuite(factory);
}
