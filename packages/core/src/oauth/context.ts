import type { SqlStore } from '../sql/dialect';
import type { Clock } from '../clock/index';
import type { Registry } from '../resources/registry';
import type { HttpRequest } from '../http/types';
import type { RateLimitStore } from '../limits/rules';
import type { GrantDeps } from './grants/shared';

/** What a consent screen shows and must post back (`fields` as hidden inputs, plus a `decision` of `allow` or `deny`). */
export interface ConsentView {
  client: { id: string; name: string };
  /** The workspace the app will reach unless the person picks another of `workspaces` (the one they are signed in to when it qualifies). */
  workspace: { id: string; name: string };
  /**
   * Every workspace the signed-in person can connect the app to (their
   * active memberships whose role grants some of the requested scope, and
   * that the app may reach), `workspace` among them. With more than one,
   * the page lets the person choose: post the chosen id as the `workspace`
   * field (a radio group, a select). The token reaches exactly that one.
   */
  workspaces: ConsentWorkspace[];
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

/** One workspace offered at consent, with what the app would get there (the scope clamped to the person's role in it). */
export interface ConsentWorkspace {
  id: string;
  name: string;
  /** The person's membership in it (who the token will act as). */
  memberId: string;
  scopes: string[];
  scopeDescriptions: string[];
}

/**
 * What a consent renderer returns: the page's HTML, or the HTML and headers
 * of the host's own (a `content-security-policy` that allows its stylesheet,
 * for one). Caching, type and encoding headers (`cache-control`, `pragma`,
 * `expires`, `cdn-cache-control`, `surrogate-control`, `content-type`,
 * `content-encoding`, ...) stay pmapi's (the page carries a CSRF token); a
 * policy without `frame-ancestors` gets `frame-ancestors 'none'` added (no
 * framing of the consent screen). A header that is not valid HTTP (a line
 * break, a name with a space, a character above U+00FF, a non-string value)
 * fails the renderer: 500 `server_error` page, `onError`.
 */
export type ConsentPage = string | { body: string; headers?: Record<string, string> };

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
  /** The embedding application's hooks; `req.hostRequest` is the host framework's request. */
  currentMember: (req: HttpRequest) => Promise<string | null | undefined>;
  signInUrl: (returnTo: string, req: HttpRequest) => string;
  renderConsent?: (view: ConsentView, req: HttpRequest) => Promise<ConsentPage>;
  /** Told about an error a hook threw (a consent renderer's), which the person sees as a plain error page. */
  onError?: (err: unknown, req: HttpRequest) => void;
  tokenLimit?: RateLimitStore;
  clientIp: (req: HttpRequest) => string | undefined;
}
