import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HttpRequest, HttpResponse } from '../http/types';
import { CODE_CHALLENGE_RE } from './pkce';
import { findClient, redirectUriMatches, type OAuthClientRow } from './clients';
import { clampScopes, describeScopes, parseScope } from './scopes';
import { SCOPE_MACROS } from '../auth/scopes';
import { issueCode } from './grants/code';
import { memberState } from './grants/shared';
import { AUTHORIZE_PATH } from './metadata';
import { workspaceName } from '../sql/queries/workspaces';
import { OAUTH_FORM_MAX, type ConsentView, type OAuthContext } from './context';

/** How long a consent screen's CSRF token stays valid. */
export const CONSENT_TTL_MS = 10 * 60_000;

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * The default consent screen: a plain, accessible HTML page (landmarks,
 * headings, a list of scopes in words, two labelled submit buttons).
 * Replace it with `oauth.renderConsent`.
 */
export function defaultConsentPage(v: ConsentView): string {
  const e = escapeHtml;
  const hidden = Object.entries(v.fields).map(([k, val]) => `<input type="hidden" name="${e(k)}" value="${e(val)}">`).join('\n      ');
  let host = v.redirectUri;
  try {
    host = new URL(v.redirectUri).host;
  } catch { /* shown as registered */ }
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Allow ${e(v.client.name)} to access ${e(v.workspace.name)}?</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f5f5f7; color: #1d1d1f; }
    main { max-width: 32rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 8px; }
    button { font: inherit; padding: .6rem 1.4rem; border-radius: 6px; border: 1px solid #555; margin-right: .5rem; cursor: pointer; }
    button[value="allow"] { background: #1a56db; color: #fff; border-color: #1a56db; }
    button:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
  </style>
</head>
<body>
  <main aria-labelledby="consent-title">
    <h1 id="consent-title">Allow <strong>${e(v.client.name)}</strong> to access <strong>${e(v.workspace.name)}</strong>?</h1>
    <p>You are signed in as ${e(v.member.name)}.</p>
    <h2 id="scopes-title">${e(v.client.name)} will be able to:</h2>
    <ul aria-labelledby="scopes-title">
      ${v.scopeDescriptions.map((d) => `<li>${e(d)}</li>`).join('\n      ')}
    </ul>
    <p>Access follows your role: if your permissions shrink, so does the app's.</p>
    <form method="post" action="${e(v.formAction)}">
      ${hidden}
      <button type="submit" name="decision" value="allow">Allow</button>
      <button type="submit" name="decision" value="deny">Deny</button>
    </form>
    <p>Either way you will be sent back to <strong>${e(host)}</strong>.</p>
  </main>
</body>
</html>
`;
}

function errorPage(error: string, description: string, status = 400): HttpResponse {
  const body = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Authorization request refused</title></head>
<body>
  <main aria-labelledby="t">
    <h1 id="t">Authorization request refused</h1>
    <p>Error: <code data-error="${escapeHtml(error)}">${escapeHtml(error)}</code></p>
    <p>${escapeHtml(description)}</p>
    <p>The app that sent you here is misconfigured; you were not sent back to it.</p>
  </main>
</body>
</html>
`;
  return { status, headers: { ...PAGE_HEADERS }, body };
}

/** RFC 6749 §4.1.2 / RFC 9207 §2: append the response to the registered URI as given (query mode only). */
function redirectTo(ctx: OAuthContext, redirectUri: string, params: Record<string, string | undefined>): HttpResponse {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.append(k, v);
  q.append('iss', ctx.issuer);
  const sep = redirectUri.includes('?') ? '&' : '?';
  return { status: 303, headers: { location: `${redirectUri}${sep}${q.toString()}`, 'cache-control': 'no-store', pragma: 'no-cache' } };
}

type Checked =
  | { kind: 'page'; error: string; description: string }
  | { kind: 'redirect'; redirectUri: string; error: string; description: string; state: string | undefined }
  | { kind: 'ok'; client: OAuthClientRow; redirectUri: string; scope: string[]; rawScope: string; state: string; codeChallenge: string };

const PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;

/** Every parameter of the spec's authorization-request table (RFC 6749 §4.1.1, §4.1.2.1; RFC 7636 §4.3). */
async function check(ctx: OAuthContext, q: URLSearchParams): Promise<Checked> {
  const one = (k: string) => {
    const all = q.getAll(k);
    return all.length === 1 ? all[0] : all.length === 0 ? undefined : null;
  };
  const clientId = one('client_id');
  if (clientId === null) return { kind: 'page', error: 'invalid_request', description: 'client_id is repeated' };
  if (!clientId) return { kind: 'page', error: 'invalid_request', description: 'client_id is required' };
  const client = await findClient(ctx.store.db, ctx.store, clientId);
  if (!client || client.revoked) return { kind: 'page', error: 'invalid_client', description: 'client_id names no registered app' };
  const redirectUri = one('redirect_uri');
  if (redirectUri === null) return { kind: 'page', error: 'invalid_request', description: 'redirect_uri is repeated' };
  if (!redirectUri) return { kind: 'page', error: 'invalid_request', description: 'redirect_uri is required' };
  if (!redirectUriMatches(client.redirectUris, redirectUri, ctx.loopbackAnyPort)) {
    return { kind: 'page', error: 'invalid_request', description: 'redirect_uri matches no URI registered for this app' };
  }
  const state = one('state');
  const fail = (error: string, description: string): Checked => ({ kind: 'redirect', redirectUri, error, description, state: state ?? undefined });
  for (const k of PARAMS) if (one(k) === null) return fail('invalid_request', `${k} is repeated`);
  const responseType = one('response_type');
  if (!responseType) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');
  if (!state) return fail('invalid_request', 'state is required');
  const challenge = one('code_challenge');
  if (!challenge) return fail('invalid_request', 'code_challenge is required (PKCE, RFC 7636)');
  if (!CODE_CHALLENGE_RE.test(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code_verifier (43 characters)');
  const method = one('code_challenge_method');
  if (!method) return fail('invalid_request', 'code_challenge_method is required');
  if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256; plain is not supported');
  const rawScope = one('scope');
  if (!rawScope) return fail('invalid_request', 'scope is required');
  const scope = parseScope(ctx.registry, rawScope);
  if (!scope) return fail('invalid_scope', 'scope names a scope the server does not advertise');
  return { kind: 'ok', client, redirectUri, scope, rawScope, state, codeChallenge: challenge };
}

function csrfToken(ctx: OAuthContext, memberId: string, c: Extract<Checked, { kind: 'ok' }>, exp: number): string {
  const mac = createHmac('sha256', ctx.key)
    .update(JSON.stringify(['consent', memberId, c.client.id, c.redirectUri, c.rawScope, c.state, c.codeChallenge, exp]))
    .digest('base64url');
  return `${exp}.${mac}`;
}

function csrfValid(ctx: OAuthContext, memberId: string, c: Extract<Checked, { kind: 'ok' }>, token: string | undefined, now: number): boolean {
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token ?? '');
  if (!m) return false;
  const exp = Number(m[1]);
  if (exp <= now) return false;
  const a = Buffer.from(csrfToken(ctx, memberId, c, exp));
  const b = Buffer.from(token!);
  return a.length === b.length && timingSafeEqual(a, b);
}

function formOf(req: HttpRequest): URLSearchParams | undefined {
  const ct = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct !== 'application/x-www-form-urlencoded') return undefined;
  const raw = req.body === undefined ? '' : typeof req.body === 'string' ? req.body : Buffer.from(req.body).toString('utf8');
  return new URLSearchParams(raw);
}

/**
 * `GET {auth_url}/oauth/authorize` shows the consent screen (after the
 * embedding application's sign-in); `POST` takes the decision.
 */
export async function handleAuthorize(ctx: OAuthContext, req: HttpRequest): Promise<HttpResponse> {
  const method = req.method.toUpperCase();
  let params: URLSearchParams;
  if (method === 'GET' || method === 'HEAD') {
    const i = req.url.indexOf('?');
    params = new URLSearchParams(i === -1 ? '' : req.url.slice(i + 1));
  } else if (method === 'POST') {
    if (req.body !== undefined && req.body.length > OAUTH_FORM_MAX) return errorPage('invalid_request', `The form is larger than ${OAUTH_FORM_MAX} bytes`);
    const form = formOf(req);
    if (!form) return errorPage('invalid_request', 'Post the consent form as application/x-www-form-urlencoded');
    params = form;
  } else {
    return { ...errorPage('invalid_request', `${method} is not allowed here`, 405), headers: { ...PAGE_HEADERS, allow: 'GET, POST' } };
  }
  const c = await check(ctx, params);
  if (c.kind === 'page') return errorPage(c.error, c.description);
  if (c.kind === 'redirect') return redirectTo(ctx, c.redirectUri, { error: c.error, error_description: c.description, state: c.state });

  const memberId = await ctx.currentMember(req);
  if (!memberId) {
    if (method === 'POST') return errorPage('invalid_request', 'You are no longer signed in; start again from the app', 403);
    return { status: 303, headers: { location: ctx.signInUrl(req.url), 'cache-control': 'no-store' } };
  }
  const member = await memberState(ctx.store.db, ctx.grants, memberId);
  const deny = (why: string) => redirectTo(ctx, c.redirectUri, { error: 'access_denied', error_description: why, state: c.state });
  if (!member || !member.active) return deny('The signed-in member cannot approve apps');
  if (c.client.teamId !== null && c.client.teamId !== member.teamId) return deny('This app is registered for another workspace');
  const granted = clampScopes(ctx.registry, c.scope, member.permissions);
  if (granted.length === 0) {
    return redirectTo(ctx, c.redirectUri, { error: 'invalid_scope', error_description: "Your role grants none of the requested scope", state: c.state });
  }
  const now = ctx.clock.now();

  if (method === 'POST') {
    if (!csrfValid(ctx, memberId, c, params.get('csrf_token') ?? undefined, now)) {
      return errorPage('invalid_request', 'The consent form expired or was not issued to you; start again from the app', 403);
    }
    const decision = params.get('decision');
    if (decision === 'deny') return deny('The member declined');
    if (decision !== 'allow') return errorPage('invalid_request', 'decision must be allow or deny');
    const code = await issueCode(ctx.store, ctx.grants, {
      clientId: c.client.id, memberId, teamId: member.teamId, ceiling: granted, macros: c.scope.filter((s) => (SCOPE_MACROS as readonly string[]).includes(s)), redirectUri: c.redirectUri, codeChallenge: c.codeChallenge, now,
    });
    return redirectTo(ctx, c.redirectUri, { code, state: c.state });
  }

  const wsName = await workspaceName(ctx.store.db, member.teamId);
  const fields: Record<string, string> = {};
  for (const k of PARAMS) fields[k] = params.get(k)!;
  fields.csrf_token = csrfToken(ctx, memberId, c, now + CONSENT_TTL_MS);
  const view: ConsentView = {
    client: { id: c.client.id, name: c.client.name },
    workspace: { id: member.teamId, name: wsName ?? '' },
    member: { id: member.id, name: member.name },
    scopes: granted,
    scopeDescriptions: describeScopes(granted),
    redirectUri: c.redirectUri,
    formAction: `${ctx.issuer}${AUTHORIZE_PATH}`,
    fields,
  };
  return { status: 200, headers: { ...PAGE_HEADERS }, body: (ctx.renderConsent ?? defaultConsentPage)(view) };
}
