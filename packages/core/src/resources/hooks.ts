/**
 * The context resource hooks and operations work with (the hook context of
 * the declarations): who calls, the repository, the registry, the clock. It
 * lives beside the declarations so they depend on nothing above them;
 * services/ implements it.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../clock/index';
import type { IdGenerator } from '../ids/index';
import type { Registry } from './registry';
import type { Repo } from '../sql/repo';
import type { Rec, Resource } from './resource-spec';
import type { FileServices } from '../files/service';

/** Project access as hooks and operations use it (spec: project_access_denied, accessible_project_ids_exceeded). */
export interface ProjectAccessView {
  /** The caller opens every project (viewAllProjects). */
  readonly seesAll: boolean;
  canOpen(project: Rec): Promise<boolean>;
  filterOpen(projectIds: readonly string[]): Promise<Set<string>>;
  /** Keep only the records (of a project, or of rows of projects) the caller may open. */
  filterRecords(res: Resource, recs: Rec[]): Promise<Rec[]>;
  /** 403 project_access_denied unless the caller may open the project with this id. */
  assertProject(projectId: string): Promise<void>;
  /** The check for a record of any resource: a project itself, or a row of a project. */
  assertRecord(res: Resource, rec: Rec): Promise<void>;
  /** Of these rows (chats), the ones the caller is a member of through links of `kind`. */
  memberOf(kind: string, rowIds: readonly string[]): Promise<Set<string>>;
  /** Ids of the projects the caller may open, or 'all'; over 1000 is 400 accessible_project_ids_exceeded. */
  accessibleIds(): Promise<string[] | 'all'>;
}

export type ActorType = 'human' | 'agent' | 'cron' | 'recurringTask' | 'automation' | 'outboxRetry' | 'systemDefault';

/** Who is calling: resolved from the bearer token. */
export interface Principal {
  teamId: string;
  memberId: string;
  userId: string;
  memberName: string;
  /** The member's role name (built-in or custom) and id. */
  role: string;
  roleId: string;
  /** What the role allows (resource permissions spelled like scopes, plus special ones such as manageWebhooks). */
  permissions: ReadonlySet<string>;
  /** The caller's address as the front end derived it. */
  clientIp?: string;
  /** The path prefix the request came through (`HttpRequest.mount`): pmapi's own path-absolute file links start with it. */
  mount?: string;
  tokenId: string;
  /** When the presented token expires (ms), null for never. */
  tokenExpiresAt?: number | null;
  /** `oauth`: the token is an OAuth app's, acting for the member (an integration: spec "File" uploaderId is null for its uploads). */
  via?: 'oauth';
  /**
   * OAuth tokens: the macros (`read`, `write`, `delete`) their consent literally
   * asked for (the legacy surface's macro holders); absent for families
   * consented before it was stored.
   */
  oauthMacros?: ReadonlySet<string>;
  scopes: ReadonlySet<string>;
  /** Actor id of the member, once it has written. */
  actorId: string | null;
  /**
   * The kind of identity behind the token (docs/not-shown.md "Agents and
   * automations"): a person (absent or `human`), or an agent or automation
   * whose credential the admin API issued; their writes carry that actor type.
   */
  identity?: 'human' | 'agent' | 'automation';
}

export interface ReadContext {
  readonly principal: Principal;
  readonly teamId: string;
  readonly repo: Repo;
  readonly registry: Registry;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** The request's instant (ms); one value for the whole request. */
  readonly now: number;
  /** HMAC key of cursors (custom routes that page, such as search). */
  readonly cursorSecret: Uint8Array;
  /** Which projects the caller may open (services/access.ts implements it). */
  readonly access: ProjectAccessView;
  /** Byte storage, links, quota and processing of files. */
  readonly files: FileServices;
}

/** A v3 event before it is written to the outbox. */
export interface PendingEvent {
  type: string;
  aggregateType: string;
  aggregateId: string;
  projectId: string | null;
  payload: Record<string, unknown>;
  /**
   * The members who may see the record (a chat's members, a private
   * document's creator): only webhooks those members registered receive the
   * event. Absent: every webhook of the workspace.
   */
  audience?: readonly string[];
}

export interface WriteContext extends ReadContext {
  readonly db: Kysely<any>;
  /** The calling member's actor: created on the member's first write. */
  actor(): Promise<{ id: string; type: ActorType }>;
  /** Record an event in the outbox, in this transaction. */
  emit(event: PendingEvent): void;
  /**
   * Load a live row of the workspace or fail with 404 resource_not_found
   * (naming the field, when given). `lock: 'share'`: the row is about to be
   * referenced, so it is key-share locked where the dialect has row locks (a
   * concurrent delete waits for this transaction, then sees the reference).
   */
  mustGet(res: Resource | string, id: string, field?: string, opts?: { lock?: 'share' }): Promise<Rec>;
  /**
   * A record this transaction has just read another way (a search by project and order, say): later
   * `mustGet`s of it answer it without a statement, except where a lock is asked for and the dialect has row locks.
   */
  remember(res: Resource | string, rec: Rec): void;
  /** The next stamp for `updatedAt`: strictly after `previous`. */
  stamp(previous?: number): number;
  /**
   * The common stamps of a change to a row last updated at `previous`: a
   * strictly later `updatedAt` and the calling actor (spec "Conventions").
   * Every write path stamps through this one function.
   */
  touch(previous: number): Promise<UpdateStamp>;
}

export interface UpdateStamp {
  updatedAt: number;
  updatedByActorId: string;
  updatedByActorType: ActorType;
  /** The writing member (null for the service): stored only by resources declaring `memberStamps`. */
  updatedById?: string | null;
}
