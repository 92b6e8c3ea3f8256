import { z } from 'zod';
import { ProblemError, validationError, type FieldError } from '../errors/problem';
import { grants, isValidScope, SCOPE_MACROS, type ScopeAction } from '../auth/scopes';
import { newPersonalToken } from '../auth/mint';
import { requireHuman } from '../auth/identity';
import { iso } from '../clock/index';
import { countActivePersonalTokens } from '../sql/queries/tokens';
import { defineResource } from './define-resource';
import { f } from './fields';
import type { WriteContext } from './hooks';

/**
 * Personal access tokens (spec "Authentication" rules 2-7; bodies and
 * representation not shown in the spec: docs/not-shown.md "Personal access
 * tokens"). A personal resource: each member lists, reads and changes only
 * their own tokens, with the token's `personal-access-tokens:*` scope and no
 * role permission. DELETE revokes. Tokens emit no webhook events. The rows
 * share `access_tokens` with OAuth access tokens (`kind`).
 */

/** Spec "Limits": 20 active personal access tokens per user. */
export const PAT_CAP = 20;
export const PAT_NAME_MAX = 100;

const ACTIONS: readonly ScopeAction[] = ['read', 'write', 'delete'];
const MACROS: ReadonlySet<string> = new Set(SCOPE_MACROS);
const ISO = z.iso.datetime({ offset: true });

/** A zod issue reported with our own `errors[].code` (services/body.ts reads `params.code`). */
function fail(c: z.RefinementCtx, code: string, message: string): void {
  c.addIssue({ code: 'custom', message, params: { code } });
}

const nameSchema = z.string({ error: 'must be a string' }).transform((v, c) => {
  const name = v.trim();
  if (name.length === 0) fail(c, 'too_short', 'must not be empty');
  else if (name.length > PAT_NAME_MAX) fail(c, 'too_long', `must be at most ${PAT_NAME_MAX} characters`);
  return name;
});

/** The shape only: which scopes exist depends on the registry, so the hooks check the entries. */
const scopesSchema = z.array(z.unknown(), { error: 'must be an array of scope strings' }).superRefine((v, c) => {
  if (v.length === 0) fail(c, 'too_short', 'must name at least one scope');
});

const expirySchema = z.string().nullable().superRefine((v, c) => {
  if (v !== null && !ISO.safeParse(v).success) fail(c, 'invalid_timestamp', 'must be an ISO 8601 timestamp with offset, or null');
});

type Status = 'active' | 'expired' | 'revoked';

function statusOf(t: { revokedAt: number | null; expiresAt: number | null }, now: number): Status {
  if (t.revokedAt !== null) return 'revoked';
  if (t.expiresAt !== null && t.expiresAt <= now) return 'expired';
  return 'active';
}

/** Does a scope set already grant scope `s`? `write` implies `read`; a macro is implied only by a macro. */
export function scopeImplied(held: ReadonlySet<string>, s: string): boolean {
  const i = s.indexOf(':');
  if (i === -1) return held.has(s) || (s === 'read' && held.has('write'));
  return grants(held, s.slice(0, i), s.slice(i + 1) as ScopeAction);
}

/**
 * The scope entries, checked against the registry: each a macro or
 * `<resource>:<action>` of a declared resource; duplicates dropped, order
 * kept. A list longer than twice the catalog is refused before any entry is read.
 */
function checkScopes(ctx: WriteContext, v: unknown[]): string[] {
  const known = new Set(ctx.registry.byPath.keys());
  const max = 2 * (known.size * ACTIONS.length + MACROS.size);
  if (v.length > max) throw validationError([{ field: 'scopes', code: 'too_big', message: `holds ${v.length} entries; at most ${max}` }]);
  const errors: FieldError[] = [];
  const out = new Set<string>();
  v.forEach((s, i) => {
    if (typeof s !== 'string' || !isValidScope(s) || (!MACROS.has(s) && !known.has(s.slice(0, s.indexOf(':'))))) {
      errors.push({ field: `scopes[${i}]`, code: 'invalid_scope', message: 'must be read, write, delete or <resource>:<read|write|delete> with a known resource' });
    } else out.add(s);
  });
  if (errors.length) throw validationError(errors);
  return [...out];
}

function checkFuture(ctx: WriteContext, expiresAt: unknown): void {
  if (typeof expiresAt === 'number' && !(expiresAt > ctx.now)) {
    throw validationError([{ field: 'expiresAt', code: 'in_past', message: 'must be in the future' }]);
  }
}

/**
 * Do the scopes, expanded (macros → every resource, write ⇒ read), meet the
 * role's permissions? Only role permissions count, so a token that could only
 * manage tokens is empty too.
 */
function intersectsRole(ctx: WriteContext, scopes: readonly string[]): boolean {
  const requested = new Set(scopes);
  const perms = ctx.principal.permissions;
  for (const r of ctx.registry.roleResources()) {
    for (const a of ACTIONS) if (grants(requested, r.path, a) && grants(perms, r.path, a)) return true;
  }
  return false;
}

function beyondCallerExpiry(callerExpiry: number): ProblemError {
  return validationError([{ field: 'expiresAt', code: 'exceeds_caller_expiry', message: `must be at most ${iso(callerExpiry)}` }],
    'expiresAt may not be later than the expiry of the token making the request');
}

/** A token cannot mint or change a token that may do more than itself. */
function assertWithinCaller(ctx: WriteContext, scopes: readonly string[], verb: string): void {
  const beyond = scopes.filter((s) => !scopeImplied(ctx.principal.scopes, s));
  if (beyond.length) {
    throw new ProblemError('permission_denied', `This token cannot ${verb} ${beyond.join(', ')}`, { missingPermissions: beyond });
  }
}

/** The secret minted in a request, for its create answer only: never a column, never in a stored (replayed) response. */
const secrets = new WeakMap<WriteContext, string>();

export const personalAccessTokenResource = defineResource({
  name: 'personalAccessToken',
  path: 'personal-access-tokens',
  table: 'access_tokens',
  fixed: { kind: 'pat' },
  ownedBy: 'memberId',
  events: false,
  revokeField: 'revokedAt',
  fields: {
    name: f.text(nameSchema, { required: true }),
    prefix: f.readOnly('text'),
    memberId: f.readOnly('text'),
    scopes: f.json(scopesSchema, { required: true }),
    expiresAt: { ...f.timestamp({ nullable: true }), schema: expirySchema },
    lastUsedAt: f.readOnly('timestamp', { nullable: true }),
    revokedAt: f.readOnly('timestamp', { nullable: true }),
    hash: f.readOnly('text', { writeOnly: true }),
  },
  extraResponseFields: ['status'],
  filters: {},
  defaultSort: '-createdAt',
  hooks: {
    async beforeCreate(ctx, input) {
      // Agents and automations get their credentials from the admin API only (docs/not-shown.md "Agents and automations").
      requireHuman(ctx.principal, 'create personal access tokens');
      const scopes = checkScopes(ctx, input.scopes ?? []);
      checkFuture(ctx, input.expiresAt);
      assertWithinCaller(ctx, scopes, 'grant scopes it does not hold:');
      if (!intersectsRole(ctx, scopes)) {
        throw new ProblemError('cannot_create_empty_token', "The requested scopes grant nothing the creator's role permits", { scopes });
      }
      // Nor outlive itself: the new token expires no later than the calling one (an absent expiry takes the caller's).
      const callerExpiry = ctx.principal.tokenExpiresAt ?? null;
      const expiresAt = (input.expiresAt ?? null) as number | null;
      if (callerExpiry !== null && (expiresAt === null || expiresAt > callerExpiry)) {
        if (input.expiresAt !== undefined) throw beyondCallerExpiry(callerExpiry);
        input.expiresAt = callerExpiry;
      }
      // One person's concurrent creations take turns (Postgres; SQLite serialises writers), so the cap holds.
      await ctx.repo.lock('users', ctx.principal.userId);
      const active = await countActivePersonalTokens(ctx.repo, ctx.principal.userId, ctx.now);
      if (active >= PAT_CAP) {
        throw new ProblemError('pat_cap_reached', `At most ${PAT_CAP} active personal access tokens per user; revoke one first`, { max: PAT_CAP, active });
      }
      const { token, prefix, hash } = newPersonalToken(ctx.ids);
      Object.assign(input, { scopes, expiresAt: input.expiresAt ?? null, prefix, hash, lastUsedAt: null, revokedAt: null });
      secrets.set(ctx, token);
    },
    async beforeUpdate(ctx, t, patch) {
      requireHuman(ctx.principal, 'change personal access tokens');
      const status = statusOf(t, ctx.now);
      if (status !== 'active') throw new ProblemError('conflict', `The token is ${status} and can no longer change`, { status });
      const held = t.scopes as string[];
      // The calling token may only manage tokens that can do no more than itself, and extend them no further than its own life.
      assertWithinCaller(ctx, held, 'change a token broader than itself:');
      if (patch.scopes !== undefined) {
        const scopes = checkScopes(ctx, patch.scopes);
        const added = scopes.filter((s) => !scopeImplied(new Set(held), s));
        if (added.length) throw new ProblemError('cannot_broaden_scope', `An update cannot add scopes: ${added.join(', ')}`, { addedScopes: added });
        if (!intersectsRole(ctx, scopes)) {
          throw new ProblemError('cannot_create_empty_token', "The remaining scopes would grant nothing the owner's role permits", { scopes });
        }
        patch.scopes = scopes;
      }
      if (patch.expiresAt !== undefined) {
        checkFuture(ctx, patch.expiresAt);
        const next = patch.expiresAt;
        const callerExpiry = ctx.principal.tokenExpiresAt ?? null;
        if (callerExpiry !== null && (next === null || next > callerExpiry)) throw beyondCallerExpiry(callerExpiry);
        const current = t.expiresAt;
        if (next !== null && (current === null || next < current)) {
          throw new ProblemError('cannot_shorten_expiry', 'An update can only keep or extend the expiry', {
            currentExpiresAt: current === null ? null : iso(current),
          });
        }
      }
    },
    beforeDelete(ctx) {
      requireHuman(ctx.principal, 'revoke personal access tokens');
    },
    present(ctx, rec, out) {
      out.status = statusOf(rec, ctx.now);
    },
    reveal(ctx) {
      // The secret is shown in the create answer only; an Idempotency-Key replay answers without it, so it is never stored.
      return { token: secrets.get(ctx) };
    },
  },
});
