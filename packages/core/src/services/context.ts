/** The hook context, declared beside the resources (resources/hooks.ts) and implemented by the engine. */
export type { ActorType, Principal, ReadContext, WriteContext, PendingEvent, UpdateStamp, ProjectAccessView } from '../resources/hooks';
