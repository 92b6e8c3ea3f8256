export { harness, type Harness, type StoreFactory, type Workspace, type Member, type Reply, type RequestOptions } from './kit';
export { runConformance } from './suite';
export { makePng, imageInfo } from './images';
export { rateLimitReservationsSuite, type SharedCounters } from './suites/rate-limit-reservations';
