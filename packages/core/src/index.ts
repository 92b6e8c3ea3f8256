export { createPmapi, type Pmapi, type PmapiOptions, type RequestInfo } from './api';
export * from './errors/index';
export { systemClock, fakeClock, iso, type Clock, type FakeClock } from './clock/index';
export { randomIds, sequentialIds, randomBase62, ID_PATTERN, type IdGenerator } from './ids/index';
export * from './resources/index';
export type { BodyPart, HttpRequest, HttpResponse } from './http/types';
export { Admin, BUILTIN_ROLES, type WorkspaceInfo, type MemberInfo, type BuiltinRole } from './admin/admin';
export { grants, isValidScope, SCOPE_MACROS, type ScopeAction } from './auth/scopes';
export { builtinRolePermissions, permissionCatalog, requiredPermissions, SPECIAL_PERMISSIONS } from './auth/permissions';
export type { Principal, ReadContext, WriteContext, PendingEvent, ActorType } from './services/context';
export { insertRecord, patchRecord } from './services/records';
export { MAX_LIMIT, DEFAULT_LIMIT, MAX_EXPAND_DEPTH } from './query/parse';
export { EXPAND_ROW_BUDGET } from './services/serialize';
export { v3, v3Shape, type Outcome, type OutputField, type Page } from './presenters/v3';
export { openApiDocument, COMPUTED_FIELDS, type OpenApiOptions, type OpenApiDocument, type JsonSchema } from './openapi/index';
export { setMapperMode, mapperMode, type MapperMode } from './codegen/mapper';
export { IDEMPOTENCY_TTL_MS, IDEMPOTENCY_KEY_MAX } from './services/idempotency';
export { SOFT_DELETE_RETENTION_MS, BATCH_MAX } from './services/engine';
export { CURSOR_TTL_MS } from './query/cursor';
export { parseDatabaseArg, type DatabaseArg } from './database-arg';
export {
  createRateLimiter, memoryRateLimitStore, sqlRateLimitStore, V3_RATE_LIMITS, UNKNOWN_CLIENT_IP, judge, highestAdmitted, byKeys, planOneKeyBatch, judgeOneKeyBatch, leaseBook, LEASE_MS, LEASE_MAX, inKeyOrder, windowOf, verdictOf, previousCounts,
  type PreviousCounts, type OneKeyBatch, type LeaseBook, type RateLimiter, type RateLimiterOptions, type RateLimitRule, type RateLimitTable, type RateLimitMethod, type RateLimitStore,
  type BucketHit, type BucketState, type HitOutcome,
} from './limits/index';
export {
  createLegacyRateLimiter, legacyBucketOf, LEGACY_RATE_LIMITS,
  type LegacyRateLimiter, type LegacyRateLimiterOptions, type LegacyRateLimitRule, type LegacyRateLimitTable, type LegacyRateLimitBucket,
} from './limits/legacy';
export { LEGACY_ROUTES } from './http/legacy';
export * from './webhooks/index';
export * from './oauth/index';
export * from './files/ports';
export * from './files/local';
export { signBlobLink, verifyBlobLink, type BlobLink } from './files/links';
export { serveBlobRequest } from './files/serve';
export { FILE_SIZE_MAX, DEFAULT_QUOTA_BYTES, type FileOptions } from './files/service';
export type { FileJobsResult } from './files/jobs';
export type { RemindersJobOptions, RemindersJobResult } from './jobs/reminders';
