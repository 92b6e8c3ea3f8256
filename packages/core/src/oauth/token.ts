import type { HttpRequest, HttpResponse } from '../http/types';
import { OAUTH_FORM_MAX, type OAuthContext } from './context';
import { OAuthError } from './errors';
import { CODE_VERIFIER_RE } from './pkce';
import { findClient, secretMatches, type OAuthClientRow } from './clients';
import { redeemCode } from './grants/code';
import { refresh } from './grants/refresh';
import { UNKNOWN_CLIENT_IP, windowOf, type RateLimitStore } from '../limits/index';

/** Spec "Limits": /oauth/token allows 120 requests per minute per IP, no block period. */
export const TOKEN_RATE_LIMIT = { limit: 120, windowMs: 60_000 } as const;

/** Spec "Limits": the /oauth/token on the API host allows 120 per minute and 1,000 per hour per IP, no block period. */
export const API_HOST_TOKEN_RATE_LIMITS = [{ limit: 120, windowMs: 60_000 }, { limit: 1000, windowMs: 60 * 60_000 }] as const;

/**
 * Which token endpoint answers: the authorization server's (`{auth_url}/oauth/token`,
 * the default) or the API host's (`{base_url}/oauth/token`, served by `api.handle`).
 * Same grants, same code; only the per-IP limits differ.
 */
export type TokenEndpoint = 'authorization-server' | 'api-host';

/**
 * The API host's limit: both buckets must admit the request, counted per IP,
 * no block period. Retry-After is when the tripped bucket surely admits again
 * (its current fixed window's end plus window/limit: by then the sliding
 * estimate is at most the limit), so a client waiting that long is admitted
 * unless others from its address spend the room first. Which bucket tripped:
 * the hourly one is given a 1 ms block and the minute one none, so the store's
 * retryAfterMs (0 or 1) names it.
 */
async function apiHostLimit(ctx: OAuthContext, store: RateLimitStore, ip: string): Promise<void> {
  const now = ctx.clock.now();
  const buckets = API_HOST_TOKEN_RATE_LIMITS.map((r, i) => ({ key: `oauth-token-api:${i + 1}:ip:${ip}`, limit: r.limit, windowMs: r.windowMs, blockMs: i }));
  const out = await store.hit(buckets, now);
  if (out.admitted) return;
  const rule = API_HOST_TOKEN_RATE_LIMITS[out.retryAfterMs >= 1 ? 1 : 0];
  const retryAfter = Math.max(1, Math.ceil((windowOf(now, rule.windowMs).resetMs + Math.ceil(rule.windowMs / rule.limit)) / 1000));
  throw new OAuthError('rate_limited', `Too many token requests from this address (at most ${rule.limit} per ${rule.windowMs === 60_000 ? 'minute' : 'hour'}); retry after ${retryAfter} s`, 429,
    { 'retry-after': String(retryAfter) }, { retryAfter });
}

const JSON_NO_STORE = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' };

/** An RFC 6749 §5.2 error body. */
export function oauthErrorResponse(err: OAuthError): HttpResponse {
  return {
    status: err.status,
    headers: { ...JSON_NO_STORE, ...err.headers },
    body: JSON.stringify({ error: err.error, error_description: err.description, ...err.extras }),
  };
}

function header(req: HttpRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Client authentication (RFC 6749 §2.3, spec "Authentication" 4): `none` for
 * public clients, `client_secret_post` for confidential ones. A wrong or
 * missing secret, an unknown or revoked client: 401 invalid_client.
 */
async function authenticateClient(ctx: OAuthContext, form: URLSearchParams): Promise<OAuthClientRow> {
  const clientId = form.get('client_id');
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required');
  const client = await findClient(ctx.store.db, ctx.store, clientId);
  const secret = form.get('client_secret');
  const bad = (why: string) => new OAuthError('invalid_client', why, 401);
  if (!client || client.revoked) throw bad('Unknown client');
  if (client.type === 'confidential') {
    if (!secret) throw bad('This confidential client must send client_secret in the body (client_secret_post)');
    if (!secretMatches(client.secretHash, secret)) throw bad('Wrong client_secret');
  } else if (secret !== null) {
    throw bad('A public client authenticates with client_id alone (method none)');
  }
  return client;
}

/** `POST {auth_url}/oauth/token` (RFC 6749 §3.2, OAuth 2.1 §3.2), form-encoded; also `POST {base_url}/oauth/token` (`endpoint: 'api-host'`). */
export async function handleToken(ctx: OAuthContext, req: HttpRequest, endpoint: TokenEndpoint = 'authorization-server'): Promise<HttpResponse> {
  try {
    if (req.method.toUpperCase() !== 'POST') {
      throw new OAuthError('invalid_request', 'The token endpoint accepts POST only', 405, { allow: 'POST' });
    }
    if (endpoint === 'api-host') {
      if (ctx.tokenLimit) await apiHostLimit(ctx, ctx.tokenLimit, ctx.clientIp(req) || UNKNOWN_CLIENT_IP);
    } else if (ctx.tokenLimit) {
      const ip = ctx.clientIp(req) || UNKNOWN_CLIENT_IP;
      const out = await ctx.tokenLimit.hit([{ key: `oauth-token:ip:${ip}`, ...TOKEN_RATE_LIMIT, blockMs: 0 }], ctx.clock.now());
      if (!out.admitted) {
        const retryAfter = Math.max(1, Math.ceil(out.retryAfterMs / 1000));
        throw new OAuthError('rate_limited', `Too many token requests from this address; retry after ${retryAfter} s`, 429,
          { 'retry-after': String(retryAfter) }, { retryAfter });
      }
    }
    const authorization = header(req, 'authorization');
    if (authorization) {
      // RFC 6749 §5.2: answer a header-based attempt with 401 and a challenge of the scheme used.
      const scheme = /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)/.exec(authorization)?.[1] ?? 'Basic';
      throw new OAuthError('invalid_client', `${scheme} client authentication is not supported; send client_id (and client_secret) in the form body`, 401, {
        'www-authenticate': `${scheme} realm="${ctx.issuer}"`,
      });
    }
    const ct = (header(req, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (ct !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'Send the body as application/x-www-form-urlencoded');
    // A token request is a handful of short parameters: a large form is refused before it is parsed.
    if (req.body !== undefined && req.body.length > OAUTH_FORM_MAX) throw new OAuthError('invalid_request', `The form is larger than ${OAUTH_FORM_MAX} bytes`);
    const raw = req.body === undefined ? '' : typeof req.body === 'string' ? req.body : Buffer.from(req.body).toString('utf8');
    const form = new URLSearchParams(raw);
    const seen = new Set<string>();
    for (const k of form.keys()) {
      if (seen.has(k)) throw new OAuthError('invalid_request', `${k.slice(0, 64)} is repeated`);
      seen.add(k);
    }
    const grantType = form.get('grant_type');
    if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
      throw new OAuthError('unsupported_grant_type', 'Only authorization_code and refresh_token are supported');
    }
    const client = await authenticateClient(ctx, form);
    const now = ctx.clock.now();
    const need = (k: string) => {
      const v = form.get(k);
      if (!v) throw new OAuthError('invalid_request', `${k} is required`);
      return v;
    };
    let body;
    if (grantType === 'authorization_code') {
      const code = need('code');
      const redirectUri = need('redirect_uri');
      const codeVerifier = need('code_verifier');
      if (!CODE_VERIFIER_RE.test(codeVerifier)) throw new OAuthError('invalid_request', 'code_verifier must be 43-128 unreserved characters (RFC 7636 §4.1)');
      body = await redeemCode(ctx.store, ctx.grants, client, { code, redirectUri, codeVerifier }, now);
    } else {
      const refreshToken = need('refresh_token');
      const scope = form.get('scope');
      body = await refresh(ctx.store, ctx.grants, client, { refreshToken, ...(scope !== null ? { scope } : {}) }, now);
    }
    return { status: 200, headers: { ...JSON_NO_STORE }, body: JSON.stringify(body) };
  } catch (err) {
    if (err instanceof OAuthError) return oauthErrorResponse(err);
    if (ctx.store.dialect.isUnavailable(err)) {
      return oauthErrorResponse(new OAuthError('temporarily_unavailable', 'The database is unavailable; retry shortly', 503, { 'retry-after': '1' }));
    }
    throw err;
  }
}
