import { errorCodes, type ErrorCode } from './codes';

/**
 * The reference entry of every error code (issue 17): what it means, the
 * extra fields its problem body carries, and what a client should do. A
 * problem's `docsUrl` (`{docsBaseUrl}/errors/{code}`) points at the entry:
 * `api.handle` serves it at `GET {basePath}/errors/{code}` and the same text
 * is committed as docs/errors/{code}.md (generated from this table; a test
 * keeps the two equal). Keyed by `ErrorCode`: a code without an entry fails
 * the typecheck.
 */
export interface ErrorReference {
  /** When the API answers with this code. */
  meaning: string;
  /** Extra top-level fields of the problem body: name → what it holds. */
  fields?: Readonly<Record<string, string>>;
  /** What the client should do about it. */
  action: string;
}

const RETRY_NO = 'Retrying the same request gives the same answer.';
const FIX = 'Fix the request; ' + RETRY_NO.charAt(0).toLowerCase() + RETRY_NO.slice(1);

export const errorReference: Readonly<Record<ErrorCode, ErrorReference>> = {
  validation_failed: {
    meaning: 'The request body (or an operation\'s parameters) failed validation: a field is missing, of the wrong type, out of range or unknown.',
    fields: { errors: 'array of `{field, code, message}`, one per problem found (at most 50)', errorsOmitted: 'how many further field errors were left out (only when more than 50)' },
    action: `Correct each field named in \`errors\` (branch on its \`code\`, not on \`message\`). ${RETRY_NO}`,
  },
  cursor_invalid: {
    meaning: 'The `cursor` was not issued by this endpoint, has expired, or belongs to another sort or filter.',
    action: 'Start again from the first page (drop `cursor`) and follow the `nextCursor` values the API returns, unchanged.',
  },
  cursor_sort_mismatch: {
    meaning: '`cursor` and `sort` were given together, but the sort differs from the one the cursor was issued for.',
    fields: { cursorSort: 'the sort the cursor belongs to', sort: 'the sort requested' },
    action: 'Send the cursor alone (it carries its sort), or start from the first page with the new sort.',
  },
  pagination_param_unknown: {
    meaning: 'An unknown pagination parameter was sent; the valid ones are `cursor`, `limit` and `sort`.',
    fields: { name: 'the parameter sent', allowed: '`cursor`, `limit` and `sort`' },
    action: FIX,
  },
  sort_field_invalid: {
    meaning: 'The `sort` names a field this resource cannot be sorted by.',
    fields: { field: 'the field asked for', resource: 'the resource listed', allowed: 'the fields that can be sorted by' },
    action: 'Sort by one of the `allowed` fields.',
  },
  resource_unknown: {
    meaning: 'The path names no resource of this API.',
    fields: { resource: 'the name in the path', available: 'every resource name served' },
    action: 'Check the spelling against `available`.',
  },
  resource_misconfigured: {
    meaning: 'The server could not process this resource (its storage does not match its declaration).',
    action: 'Retrying will not help: report it to the operator of the API, quoting `requestId`.',
  },
  search_query_missing: {
    meaning: 'A search was asked for without `q`.',
    action: 'Send `q` (3-200 characters).',
  },
  search_query_too_short: {
    meaning: '`q` has fewer than 3 characters.',
    fields: { min: 'the least length (3)', length: 'the length sent' },
    action: 'Wait until the user typed at least 3 characters before searching.',
  },
  search_query_too_long: {
    meaning: '`q` has more than 200 characters.',
    fields: { max: 'the greatest length (200)', length: 'the length sent' },
    action: 'Shorten the query.',
  },
  search_query_invalid: {
    meaning: '`q` holds a URL, script, HTML or an e-mail address, which search does not take.',
    fields: { reason: '`url`, `script`, `html` or `email`' },
    action: 'Remove the offending part from the query.',
  },
  search_timed_out: {
    meaning: 'The search took longer than the server allows.',
    action: 'Narrow the search (a longer, more specific `q`, or a filter) and try again.',
  },
  identity_rejected: {
    meaning: 'The caller\'s kind of identity may not do this: only a person can (an app or integration identity is refused).',
    fields: { identityType: 'the caller\'s kind of identity', allowed: 'the kinds accepted (`human`)' },
    action: 'Make the request with a person\'s own token (a personal access token, or an OAuth token a person granted).',
  },
  empty_update: {
    meaning: 'A PATCH body held no field to change.',
    action: 'Send at least one field, or skip the request.',
  },
  project_not_specified: {
    meaning: 'A project-scoped create or list was made without naming the project.',
    action: 'Send `projectId` (in the body for a create, as a filter for a list).',
  },
  accessible_project_ids_exceeded: {
    meaning: 'A workspace-wide list was asked for by a caller with access to more than 1000 projects.',
    action: 'List per project (filter on `projectId`) instead.',
  },
  milestone_dependency_wrong_project: {
    meaning: 'A milestone\'s `dependencyId` names a milestone of another project.',
    fields: { field: '`dependencyId`' },
    action: 'Pick a dependency in the same project.',
  },
  milestone_hiddenfor_roles_not_in_team: {
    meaning: 'A milestone\'s `hiddenFor` holds role ids of another workspace.',
    action: 'Send role ids of this workspace only (list them with GET /roles).',
  },
  favorite_folder_invalid: {
    meaning: '`favoriteFolderId` names a folder the caller does not own.',
    fields: { field: '`favoriteFolderId`' },
    action: 'Use one of the caller\'s own favorite folders, or none.',
  },
  expand_too_deep: {
    meaning: '`expand` goes deeper than the limit (4 hops).',
    fields: { max: 'the greatest depth', depth: 'the depth asked for', path: 'the expand path that is too deep' },
    action: 'Expand fewer levels; fetch deeper records in a second request.',
  },
  expand_cycle_detected: {
    meaning: 'An `expand` path comes back to a resource it already went through.',
    fields: { path: 'the offending expand path' },
    action: 'Remove the loop from the expand path.',
  },
  expand_unknown_relation: {
    meaning: '`expand` names a relation the resource does not have.',
    fields: { relation: 'the relation asked for', resource: 'the resource it was looked for on', available: 'the relations that can be expanded' },
    action: 'Expand one of the `available` relations.',
  },
  expand_budget_exceeded: {
    meaning: 'The expansion would materialise too many rows.',
    fields: { relation: 'the relation that went over', budget: 'the row budget' },
    action: 'Expand less (fewer relations, a smaller page with `limit`), or read the related records with their own list.',
  },
  invalid_field_selector: {
    meaning: '`fields[resource]` names an unknown resource or field.',
    fields: { resource: 'the resource of the selector', field: 'the unknown field (null when the resource itself is unknown)' },
    action: 'Select fields the resource has.',
  },
  invalid_query_param: {
    meaning: 'A query parameter has a value outside its allowed set (or the URL or query string is malformed or too long).',
    fields: { name: 'the parameter (null when the whole query or URL is at fault)', allowed: 'what it accepts' },
    action: `Send a value from \`allowed\`. ${RETRY_NO}`,
  },
  move_target_milestone_mismatch: {
    meaning: 'A task moved to another project was given a `milestoneId` of a third project.',
    fields: { field: 'the field at fault' },
    action: 'Give a milestone of the target project, or leave it out to get the default.',
  },
  move_target_taskgroup_mismatch: {
    meaning: 'A task moved to another project was given a status column (`taskGroupId`) of another project.',
    fields: { field: 'the field at fault' },
    action: 'Give a status column of the target project, or leave it out to get the default.',
  },
  move_target_no_default_milestone: {
    meaning: 'The target project of a move has no non-archived milestone to default to.',
    action: 'Give `milestoneId` explicitly, or create a milestone in the target project first.',
  },
  move_target_no_default_taskgroup: {
    meaning: 'The target project of a move has no status column to default to.',
    action: 'Give the status column explicitly, or create one in the target project first.',
  },
  task_no_default_status: {
    meaning: 'A task was created in a project that has no active status.',
    action: 'Create (or re-activate) a status in the project, or give one explicitly.',
  },
  move_subtask_must_move_with_parent: {
    meaning: '`projectId` was changed on a subtask; subtasks move only with their parent.',
    action: 'Move the top-level task instead, or detach the subtask first.',
  },
  task_subtask_chain_too_deep: {
    meaning: 'The moved subtree has more than 200 tasks; nothing was changed.',
    action: 'Move smaller subtrees.',
  },
  task_dependency_incomplete: {
    meaning: 'A task was marked completed while a task it depends on is not.',
    fields: { dependencyId: 'the incomplete dependency' },
    action: 'Complete the dependency first, or remove the dependency.',
  },
  bulk_too_large: {
    meaning: 'A bulk write holds more than 150 items.',
    fields: { max: 'the most items (150)', received: 'how many were sent' },
    action: 'Split the write into chunks of at most 150.',
  },
  batch_empty: {
    meaning: 'A sub-resource request had no `ids`, or an empty list.',
    action: 'Send at least one id, or skip the request.',
  },
  batch_too_large: {
    meaning: 'A sub-resource request holds more ids than the endpoint takes.',
    fields: { max: 'the most ids', received: 'how many were sent' },
    action: 'Split the ids into chunks of at most `max`.',
  },
  m2m_relation_unknown: {
    meaning: 'The path names a relation the resource does not have.',
    fields: { relation: 'the relation in the path', available: 'the relations of the resource' },
    action: 'Use one of the `available` relations.',
  },
  pat_cap_reached: {
    meaning: 'Creating this personal access token would exceed 20 active tokens for the user.',
    action: 'Revoke tokens that are no longer used, then try again.',
  },
  cannot_broaden_scope: {
    meaning: 'A token update adds a scope; scopes can only be narrowed.',
    fields: { addedScopes: 'the scopes that would be added' },
    action: 'Create a new token with the broader scopes instead.',
  },
  cannot_shorten_expiry: {
    meaning: 'A token update sets an earlier `expiresAt`.',
    action: 'Keep or extend the expiry; revoke the token to end it now.',
  },
  cannot_create_empty_token: {
    meaning: 'The requested scopes do not intersect the creator\'s role permissions: the token could do nothing.',
    fields: { scopes: 'the scopes asked for' },
    action: 'Ask for scopes the creator\'s role grants.',
  },
  unauthorized: {
    meaning: 'The request carried no valid credential (no `Authorization: Bearer` header, or a malformed one, or two).',
    action: 'Send exactly one `Authorization: Bearer <token>` header.',
  },
  invalid_token: {
    meaning: 'The token is unknown or was revoked.',
    action: 'Get a new token (an OAuth client refreshes or re-authorizes); do not retry with this one.',
  },
  token_expired: {
    meaning: 'The token\'s `expiresAt` has passed.',
    action: 'Get a new token (an OAuth client uses its refresh token).',
  },
  token_owner_inactive: {
    meaning: 'The member who owns the token was deactivated or deleted.',
    action: 'The token cannot be used any more; a workspace admin can re-activate the member.',
  },
  permission_denied: {
    meaning: 'The identity lacks a permission the operation needs (the token\'s scope, the role\'s permission, or both).',
    fields: { missingPermissions: 'the permissions or scopes that are missing' },
    action: 'Ask for a token with the missing scope, or a role with the missing permission. Retrying will not help.',
  },
  project_access_denied: {
    meaning: 'The caller has no access to the targeted project.',
    fields: { projectId: 'the project' },
    action: 'Ask a project admin for access, or target a project the caller can see.',
  },
  default_label_locked: {
    meaning: 'A system default label cannot be renamed or deleted.',
    action: 'Leave default labels as they are; create your own label instead.',
  },
  default_role_locked: {
    meaning: 'A built-in role cannot be changed.',
    fields: { roleId: 'the role' },
    action: 'Create a custom role with the permissions you need.',
  },
  permission_exceeds_caller_grant: {
    meaning: 'The role permissions asked for go beyond the caller\'s own.',
    fields: { exceedingPermissions: 'the permissions the caller does not hold', field: 'the field at fault, when there is one' },
    action: 'Grant only permissions you hold yourself, or ask someone who holds them.',
  },
  resource_not_found: {
    meaning: 'The id names nothing: missing, in the trash, of another workspace, or out of the caller\'s reach.',
    fields: { id: 'the id looked for (when one was)', field: 'the body field that named it (when one did)' },
    action: 'Check the id; a record in the trash can be restored first.',
  },
  m2m_target_not_found: {
    meaning: 'Some ids of a sub-resource request name nothing.',
    fields: { missing: 'the ids not found', relation: 'the relation', field: 'the body field that named them, when one did' },
    action: 'Drop or correct the `missing` ids.',
  },
  conflict: {
    meaning: 'The change collides with the current state (for example a name that must be unique is taken).',
    fields: { field: 'the field at fault, when there is one', id: 'the record it collides with, when known' },
    action: 'Read the current state, then change the request (another name, or update the existing record).',
  },
  stale_write: {
    meaning: '`expectedUpdatedAt` no longer matches: the record changed since you read it.',
    action: 'Read the record again, re-apply your change to the fresh version, and send it with the new `updatedAt`.',
  },
  rate_limited: {
    meaning: 'A rate limiter tripped; the request was not carried out.',
    fields: { retryAfter: 'seconds to wait (also in the `Retry-After` header)' },
    action: 'Wait `retryAfter` seconds before the next request; ignore `X-RateLimit-*` on a 429. Retrying during the block does not shorten it; do not blind-retry a POST without an `Idempotency-Key`.',
  },
  m2m_not_supported: {
    meaning: 'This relation is not available on the resource.',
    fields: { relation: 'the relation' },
    action: 'Use the relation\'s own resource instead.',
  },
  route_not_found: {
    meaning: 'No route matches the method and path.',
    action: 'Check the path (and the API version in it).',
  },
  method_not_allowed: {
    meaning: 'The path exists but does not take this method.',
    fields: { allowed: 'the methods it takes (also in the `Allow` header)' },
    action: 'Use one of the `allowed` methods.',
  },
  request_timeout: {
    meaning: 'The request body did not arrive in time; the connection is closed.',
    fields: { timeoutMs: 'the deadline, in milliseconds' },
    action: 'Send the body at once (no trickling); retry on a new connection.',
  },
  payload_too_large: {
    meaning: 'The request body is larger than the server accepts.',
    fields: { limit: 'the largest body accepted, in bytes' },
    action: 'Send less (split bulk writes; upload file bytes through an upload link).',
  },
  unsupported_media_type: {
    meaning: 'The body was not sent as JSON.',
    fields: { contentType: 'the `Content-Type` sent (null when none)' },
    action: 'Send `Content-Type: application/json` with a JSON body.',
  },
  idempotency_key_reused: {
    meaning: 'The `Idempotency-Key` was used before with a different request body.',
    action: 'Use a fresh key for a different request; send the same body to replay the first answer.',
  },
  idempotency_key_in_progress: {
    meaning: 'A request with the same `Idempotency-Key` is still being carried out.',
    action: 'Wait a moment and send it again: you will get the first request\'s answer.',
  },
  internal_error: {
    meaning: 'The server failed unexpectedly; the change, if any, was rolled back.',
    action: 'Retry later (with the same `Idempotency-Key` for a write); if it persists, report it quoting `requestId`.',
  },
  service_unavailable: {
    meaning: 'A service the request needs is unavailable (the database, or file storage that is not configured).',
    action: 'Retry after `Retry-After` seconds when the header is present; otherwise the feature is not set up on this server.',
  },
  link_invalid: {
    meaning: 'A file link is malformed, its signature does not hold, or an upload link no longer takes bytes.',
    action: 'Ask the API for a fresh link (read the file again, or request a new upload URL).',
  },
  link_expired: {
    meaning: 'A file link has expired.',
    action: 'Ask the API for a fresh link (read the file again, or request a new upload URL).',
  },
};

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** `code` spans and `**bold**` of the reference text, as HTML. */
const inline = (s: string) => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');

function page(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title>`
    + '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}dt{font-weight:600}</style></head>'
    + `<body>\n${body}\n</body></html>\n`;
}

/** The reference entry of a code, in Markdown (docs/errors/{code}.md). */
export function errorReferenceMarkdown(code: ErrorCode): string {
  const { status, title } = errorCodes[code];
  const ref = errorReference[code];
  const fields = Object.entries(ref.fields ?? {});
  return [
    `# \`${code}\``,
    '',
    `HTTP ${status} · ${title}`,
    '',
    `**Meaning.** ${ref.meaning}`,
    '',
    '**Extra fields.**' + (fields.length ? '' : ' None beyond the standard problem fields (`type`, `title`, `status`, `detail`, `instance`, `code`, `requestId`, `docsUrl`).'),
    ...(fields.length ? ['', ...fields.map(([k, v]) => `- \`${k}\`: ${v}`)] : []),
    '',
    `**What to do.** ${ref.action}`,
    '',
    'Branch on `code`, never on `detail` (its wording may change). [All error codes](README.md)',
    '',
  ].join('\n');
}

/** The reference entry of a code, as an HTML page (served at `{basePath}/errors/{code}`). */
export function errorReferenceHtml(code: ErrorCode): string {
  const { status, title } = errorCodes[code];
  const ref = errorReference[code];
  const fields = Object.entries(ref.fields ?? {});
  return page(`${code} (HTTP ${status})`, [
    `<h1><code>${code}</code></h1>`,
    `<p>HTTP ${status} · ${esc(title)}</p>`,
    `<p><strong>Meaning.</strong> ${inline(ref.meaning)}</p>`,
    fields.length
      ? `<p><strong>Extra fields.</strong></p><dl>${fields.map(([k, v]) => `<dt><code>${esc(k)}</code></dt><dd>${inline(v)}</dd>`).join('')}</dl>`
      : '<p><strong>Extra fields.</strong> None beyond the standard problem fields.</p>',
    `<p><strong>What to do.</strong> ${inline(ref.action)}</p>`,
    '<p>Branch on <code>code</code>, never on <code>detail</code> (its wording may change). <a href="../errors">All error codes</a></p>',
  ].join('\n'));
}

const INDEX_INTRO = 'Every v3 error is an RFC 7807 problem body (`application/json`) with `type`, `title`, `status`, `detail`, `instance`, `code`, `requestId` and `docsUrl`, which links to the entry below. Branch on `code`.';

/** The list of every code, in Markdown (docs/errors/README.md). */
export function errorIndexMarkdown(): string {
  const codes = Object.keys(errorCodes) as ErrorCode[];
  return [
    '# Error codes',
    '',
    '<!-- Generated from packages/core/src/errors/reference.ts by test/error-docs.test.ts (PMAPI_WRITE_DOCS=1); do not edit. -->',
    '',
    INDEX_INTRO,
    '',
    '| code | HTTP | meaning |',
    '|---|---|---|',
    ...codes.map((c) => `| [\`${c}\`](${c}.md) | ${errorCodes[c].status} | ${errorReference[c].meaning.replace(/\|/g, '\\|')} |`),
    '',
  ].join('\n');
}

/** The list of every code, as an HTML page (served at `{basePath}/errors`). */
export function errorIndexHtml(): string {
  const codes = Object.keys(errorCodes) as ErrorCode[];
  return page('Error codes', [
    '<h1>Error codes</h1>',
    `<p>${inline(INDEX_INTRO)}</p>`,
    '<table><thead><tr><th>code</th><th>HTTP</th><th>meaning</th></tr></thead><tbody>',
    ...codes.map((c) => `<tr><td><a href="errors/${c}"><code>${c}</code></a></td><td>${errorCodes[c].status}</td><td>${inline(errorReference[c].meaning)}</td></tr>`),
    '</tbody></table>',
  ].join('\n'));
}

const VERSIONING = [
  'The legacy v1.0 API (`/api/v1.0`) is frozen: no new fields, endpoints or behaviour changes. It is retired on **1 September 2027**. Its answers carry `Deprecation: true`, `Sunset: Wed, 01 Sep 2027 00:00:00 GMT` and a `Link` header (`rel="deprecation"`) to this page.',
  'New integrations use v3 (`/api/v3`) and the OAuth 2.1 server. Differences from OAuth 2.0 clients: PKCE is mandatory for every client, the implicit and password grants are gone, redirect URIs match exactly, refresh tokens are single-use and rotate, client credentials go in the body, and clients validate the `iss` parameter.',
  'Within v3, a renamed resource keeps answering at its old path for a while, with `Deprecation: true` and `Link: <new path>; rel="successor-version"`: move to the new path.',
];

/** The versioning page, in Markdown (docs/versioning.md). */
export function versioningMarkdown(): string {
  return ['# Versioning', '', '<!-- Generated from packages/core/src/errors/reference.ts by test/error-docs.test.ts (PMAPI_WRITE_DOCS=1); do not edit. -->', '', ...VERSIONING.flatMap((p) => [p, '']), '[Error codes](errors/README.md)', ''].join('\n');
}

/** The versioning page, as HTML (served at `{basePath}/versioning`). */
export function versioningHtml(): string {
  return page('Versioning', ['<h1>Versioning</h1>', ...VERSIONING.map((p) => `<p>${inline(p).replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')}</p>`)].join('\n'));
}
