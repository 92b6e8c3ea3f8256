import type { SqlStore } from '../sql/dialect';
import type { Clock } from '../clock/index';
import type { Registry } from '../resources/registry';
import type { HttpRequest } from '../http/types';
import type { RateLimitStore } from '../limits/rules';
import type { GrantDeps } from './grants/shared';

/** What a consent screen shows and must post back (`fields` as hidden inputs, plus a `decision` of `allow` or `deny`). */
export interface ConsentView {
  client: { id: string; name: string };
  workspace: { id: string; name: string };
  member: { id: string; name: string };
  /** The fine-grained scopes the app will get (the requested scope clamped to the member's role). */
  scopes: string[];
  /** The same, in words, one line per resource. */
  scopeDescriptions: string[];
  redirectUri: string;
  /** Where the form posts (method POST, `application/x-www-form-urlencoded`). */
  formAction: string;
  /** Hidden inputs to post back unchanged, the CSRF token among them. */
  fields: Record<string, string>;
}

/** Largest form body the token and consent endpoints read (their parameters fit in a few hundred bytes). */
export const OAUTH_FORM_MAX = 16 * 1024;

/** What every endpoint of the authorization server works with. */
export interface OAuthContext {
  issuer: string;
  store: SqlStore;
  clock: Clock;
  registry: Registry;
  grants: GrantDeps;
  /** HMAC key of consent CSRF tokens. */
  key: Uint8Array;
  loopbackAnyPort: boolean;
  currentMember: (req: HttpRequest) => Promise<string | null | undefined>;
  signInUrl: (returnTo: string) => string;
  renderConsent?: (view: ConsentView) => string;
  tokenLimit?: RateLimitStore;
  clientIp: (req: HttpRequest) => string | undefined;
}
