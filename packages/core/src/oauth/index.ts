import type { HttpRequest, HttpResponse } from '../http/types';
import type { RateLimitStore } from '../limits/rules';
import type { OAuthContext } from './context';
import { handleAuthorize } from './authorize';
import type { ConsentPage, ConsentView } from './context';
import { handleToken } from './token';
import { AUTHORIZE_PATH, METADATA_PATH, TOKEN_PATH, metadata } from './metadata';

export { defaultConsentPage, CONSENT_TTL_MS } from './authorize';
export type { ConsentView, ConsentWorkspace, ConsentPage } from './context';
export { metadata, AUTHORIZE_PATH, TOKEN_PATH, METADATA_PATH } from './metadata';
export { TOKEN_RATE_LIMIT, API_HOST_TOKEN_RATE_LIMITS } from './token';
export { CODE_TTL_MS, ACCESS_TOKEN_TTL_S, REFRESH_TOKEN_TTL_MS } from './grants/shared';
export { redirectUriProblem, redirectUriMatches, type OAuthClientType, type RegisterOAuthClientInput, type RegisteredOAuthClient } from './clients';
export { s256 } from './pkce';
export { supportedScopes, coarseSummary } from './scopes';
export { OAuthError } from './errors';

/**
 * How the embedding application mounts the OAuth 2.1 authorization server
 * (spec "Authorization server"). The hooks get pmapi's request and, second,
 * the host framework's own request (`host`): Express's `req` under
 * `toNodeHandler`, the fetch `Request` under `toFetchHandler` — so the
 * host's session is at hand. Type it as your framework's (`(req, host: express.Request) => …`).
 *
 * @example
 * createPmapi({ store, oauth: {
 *   issuer: 'https://auth.example.com',
 *   currentMember: (_req, host: express.Request) => host.session.memberId ?? null,
 *   signInUrl: (returnTo) => `/login?next=${encodeURIComponent(returnTo)}`,
 *   renderConsent: async (view) => ({ body: await myTemplate(view), headers: { 'content-security-policy': "default-src 'self'" } }),
 * } });
 */
export interface OAuthOptions<Host = unknown> {
  /** The auth URL: the RFC 8414 issuer, e.g. `https://auth.example.com` (no trailing slash, query or fragment). */
  issuer: string;
  /**
   * Who is signed in (a member id), according to the embedding application's own session; null when nobody is.
   * A person with memberships in several workspaces (members sharing a `userId`) picks one at consent.
   */
  currentMember(req: HttpRequest, host: Host): Promise<string | null | undefined> | string | null | undefined;
  /** Where to send someone who is not signed in; `returnTo` is the authorization request's path and query, to come back to. */
  signInUrl(returnTo: string, host: Host): string;
  /**
   * Replace the consent screen (post `view.fields` back to `view.formAction` with `decision=allow|deny`, and
   * `workspace` when `view.workspaces` offers a choice). May be async; may return `{ body, headers }` to set the
   * page's headers (a CSP that admits the host's stylesheet). If it throws, the person gets a plain error page
   * (500 `server_error`) and `onError` gets the error.
   */
  renderConsent?(view: ConsentView, host: Host): ConsentPage | Promise<ConsentPage>;
  /**
   * RFC 8252 §7.3: let `http://127.0.0.1` and `http://[::1]` redirect URIs
   * match with any port (native apps listening on an ephemeral port).
   * Off by default: every redirect URI is compared as an exact full string.
   */
  loopbackAnyPort?: boolean;
  /**
   * Counters of the token endpoints' per-IP limits — the authorization
   * server's 120/minute, and 120/minute plus 1,000/hour on the API host's
   * `{base_url}/oauth/token` (default: in memory, or in the database when
   * several processes may share it); `false` turns both limits off.
   */
  tokenRateLimit?: RateLimitStore | false;
}

/** The mounted authorization server. */
export interface OAuthServer {
  issuer: string;
  /** Serve the discovery document, `/oauth/authorize` and `/oauth/token`. */
  handle(req: HttpRequest): Promise<HttpResponse>;
  /** Is this path (no query) one of the server's? Front ends use it to route. */
  owns(path: string): boolean;
}

export function validateIssuer(issuer: string): string {
  let u: URL;
  try {
    u = new URL(issuer);
  } catch {
    throw new Error(`pmapi oauth: issuer '${issuer}' is not an absolute URL`);
  }
  if (u.search || u.hash || issuer.endsWith('/') || (u.protocol !== 'https:' && u.protocol !== 'http:')) {
    throw new Error(`pmapi oauth: issuer '${issuer}' must be an http(s) URL without query, fragment or trailing slash (RFC 8414 §2)`);
  }
  return issuer;
}

/** The authorization server, plus the API host's token endpoint (`{base_url}/oauth/token`: same grants, its own limits), which `api.handle` serves. */
export function createOAuthServer(ctx: OAuthContext): OAuthServer & { handleApiHostToken(req: HttpRequest): Promise<HttpResponse> } {
  const base = new URL(ctx.issuer).pathname.replace(/\/$/, '');
  // RFC 8414 §3.1 inserts the well-known segment before the issuer's path; the spec appends it. Serve both.
  const metadataPaths = new Set([`${base}${METADATA_PATH}`, `${METADATA_PATH}${base}`]);
  const authorizePath = `${base}${AUTHORIZE_PATH}`;
  const tokenPath = `${base}${TOKEN_PATH}`;
  const owns = (path: string) => metadataPaths.has(path) || path === authorizePath || path === tokenPath;
  return {
    issuer: ctx.issuer,
    owns,
    handleApiHostToken: (req) => handleToken(ctx, req, 'api-host'),
    async handle(req) {
      const path = req.url.split('?')[0]!;
      if (path === tokenPath) return handleToken(ctx, req);
      if (path === authorizePath) return handleAuthorize(ctx, req);
      if (metadataPaths.has(path)) {
        const m = req.method.toUpperCase();
        if (m !== 'GET' && m !== 'HEAD') return { status: 405, headers: { allow: 'GET', 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ error: 'invalid_request', error_description: 'GET only' }) };
        return {
          status: 200,
          headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=3600', 'access-control-allow-origin': '*' },
          body: JSON.stringify(metadata(ctx.issuer, ctx.registry)),
        };
      }
      return { status: 404, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ error: 'invalid_request', error_description: `No OAuth endpoint at ${path}` }) };
    },
  };
}
