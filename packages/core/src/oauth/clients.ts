import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { SqlStore } from '../sql/dialect';
import { insertOAuthClient, oauthClientRow, revokeOAuthClient } from '../sql/queries/oauth';
import type { Clock } from '../clock/index';
import type { IdGenerator } from '../ids/index';
import { sha256 } from '../auth/tokens';

export type OAuthClientType = 'public' | 'confidential';

export interface RegisterOAuthClientInput {
  /** The workspace the app is registered in (optional: an app may connect to any workspace its users approve). */
  teamId?: string;
  name: string;
  type: OAuthClientType;
  redirectUris: readonly string[];
}

export interface RegisteredOAuthClient {
  clientId: string;
  /** Confidential clients only: shown once, here; only its SHA-256 digest is stored. */
  clientSecret?: string;
  type: OAuthClientType;
  redirectUris: string[];
}

export interface OAuthClientRow {
  id: string;
  teamId: string | null;
  name: string;
  type: OAuthClientType;
  secretHash: string | null;
  redirectUris: string[];
  revoked: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
export const CLIENT_SECRET_LENGTH = 48;

/**
 * Redirect URI rules 2-4 (spec "OAuth client"), checked at registration:
 * no `*`, `https://` only (plus `http://localhost`, `http://127.0.0.1`,
 * `http://[::1]`), no custom scheme, fragment or embedded credentials.
 * Returns the reason a URI is refused, or undefined.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (typeof uri !== 'string' || uri === '') return 'is empty';
  if (uri.includes('*')) return 'contains a wildcard (*)';
  if (/\s/.test(uri)) return 'contains whitespace';
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (uri.includes('#')) return 'has a fragment';
  if (u.username || u.password || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(uri)) return 'embeds credentials';
  if (u.protocol === 'https:') return u.hostname ? undefined : 'has no host';
  if (u.protocol === 'http:') return LOOPBACK_HOSTS.has(u.hostname) ? undefined : 'uses http:// on a host other than localhost, 127.0.0.1 or [::1]';
  return `uses the scheme ${u.protocol.slice(0, -1)}; only https (and http on loopback) is accepted`;
}

/**
 * Rule 1 (exact, full-string comparison). With `loopbackAnyPort` (RFC 8252
 * §7.3, opt-in) an `http://127.0.0.1` or `http://[::1]` URI matches a
 * registered one that differs only in its port.
 */
export function redirectUriMatches(registered: readonly string[], uri: string, loopbackAnyPort: boolean): boolean {
  if (registered.includes(uri)) return true;
  if (!loopbackAnyPort) return false;
  const portless = (s: string): string | undefined => {
    const m = /^http:\/\/(127\.0\.0\.1|\[::1\])(:\d{1,5})?([/?][^#]*)?$/.exec(s);
    return m ? `http://${m[1]}${m[3] ?? ''}` : undefined;
  };
  const want = portless(uri);
  return want !== undefined && registered.some((r) => portless(r) === want);
}

export async function registerClient(store: SqlStore, clock: Clock, ids: IdGenerator, input: RegisterOAuthClientInput): Promise<RegisteredOAuthClient> {
  if (typeof input.name !== 'string' || input.name.trim() === '') throw new Error('pmapi admin: an OAuth client needs a name');
  if (input.type !== 'public' && input.type !== 'confidential') throw new Error("pmapi admin: an OAuth client's type is 'public' or 'confidential'");
  const uris = [...new Set(input.redirectUris ?? [])];
  if (uris.length === 0) throw new Error('pmapi admin: an OAuth client needs at least one redirect URI');
  for (const u of uris) {
    const why = redirectUriProblem(u);
    if (why) throw new Error(`pmapi admin: redirect URI '${u}' ${why}`);
  }
  const clientId = ids.id();
  const clientSecret = input.type === 'confidential' ? ids.secret(CLIENT_SECRET_LENGTH) : undefined;
  await insertOAuthClient(store.db, store.dialect, {
    id: clientId, teamId: input.teamId ?? null, name: input.name, type: input.type,
    secretHash: clientSecret === undefined ? null : sha256(clientSecret), redirectUris: uris, now: clock.now(),
  });
  return { clientId, ...(clientSecret === undefined ? {} : { clientSecret }), type: input.type, redirectUris: uris };
}

/** Revoke a client: its row first (new requests fail), then every family (every token it holds dies with them). */
export async function revokeClient(store: SqlStore, clock: Clock, clientId: string): Promise<boolean> {
  return revokeOAuthClient(store.db, store.dialect, clientId, clock.now());
}

export async function findClient(db: Kysely<any>, store: SqlStore, clientId: string): Promise<OAuthClientRow | undefined> {
  if (!/^[0-9A-Za-z_!]{1,64}$/.test(clientId)) return undefined;
  const r = await oauthClientRow(db, clientId);
  if (!r) return undefined;
  return {
    id: r.id as string,
    teamId: (r.team_id as string | null) ?? null,
    name: r.name as string,
    type: r.type as OAuthClientType,
    secretHash: (r.secret_hash as string | null) ?? null,
    redirectUris: store.dialect.decode('json', r.redirect_uris) as string[],
    revoked: r.revoked_at !== null,
  };
}

/** Compare a presented secret with the stored digest in constant time. */
export function secretMatches(secretHash: string | null, presented: string): boolean {
  const stored = Buffer.from(secretHash ?? '0'.repeat(64), 'hex');
  const given = Buffer.from(sha256(presented), 'hex');
  return secretHash !== null && stored.length === given.length && timingSafeEqual(stored, given);
}
