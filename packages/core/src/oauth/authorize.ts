import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HttpRequest, HttpResponse } from '../http/types';
import { CODE_CHALLENGE_RE } from './pkce';
import { findClient, redirectUriMatches, type OAuthClientRow } from './clients';
import { clampScopes, describeScopes, parseScope } from './scopes';
import { SCOPE_MACROS } from '../auth/scopes';
import { issueCode } from './grants/code';
import { memberState, type MemberState } from './grants/shared';
import { personMemberIds } from '../sql/queries/oauth';
import { AUTHORIZE_PATH } from './metadata';
import { workspaceName } from '../sql/queries/workspaces';
import { OAUTH_FORM_MAX, type ConsentPage, type ConsentView, type ConsentWorkspace, type OAuthContext } from './context';

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
  // Several workspaces: the person picks the one the app gets (the token reaches exactly that one).
  const choice = v.workspaces.length < 2 ? '' : `
      <fieldset>
        <legend>Connect ${e(v.client.name)} to</legend>
        ${v.workspaces.map((w, i) => `<label><input type="radio" name="workspace" value="${e(w.id)}"${w.id === v.workspace.id ? ' checked' : ''} id="ws-${i}"> ${e(w.name)}</label>`).join('<br>\n        ')}
      </fieldset>`;
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
    <h1 id="consent-title">Allow <strong>${e(v.client.name)}</strong> to access <strong>${e(v.workspaces.length < 2 ? v.workspace.name : 'one of your workspaces')}</strong>?</h1>
    <p>You are signed in as ${e(v.member.name)}.</p>
    <h2 id="scopes-title">${e(v.client.name)} will be able to:</h2>
    <ul aria-labelledby="scopes-title">
      ${v.scopeDescriptions.map((d) => `<li>${e(d)}</li>`).join('\n      ')}
    </ul>
    <p>Access follows your role: if your permissions shrink, so does the app's.</p>
    <form method="post" action="${e(v.formAction)}">
      ${hidden}${choice}
      <button type="submit" name="decision" value="allow">Allow</button>
      <button type="submit" name="decision" value="deny">Deny</button>
    </form>
    <p>Either way you will be sent back to <strong>${e(host)}</strong>.</p>
  </main>
</body>
</html>
`;
}

function errorPage(error: string, description: string, status = 400, appAtFault = true): HttpResponse {
  const body = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Authorization request refused</title></head>
<body>
  <main aria-labelledby="t">
    <h1 id="t">Authorization request refused</h1>
    <p>Error: <code data-error="${escapeHtml(error)}">${escapeHtml(error)}</code></p>
    <p>${escapeHtml(description)}</p>
    <p>${appAtFault ? 'The app that sent you here is misconfigured; you were not sent back to it.' : 'You were not sent back to the app.'}</p>
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

/**
 * The consent form's CSRF token: the signed-in member, the request and the
 * workspace the page preselected (`defaultTeamId`, what a form posted without a
 * `workspace` field connects), signed and expiring.
 */
function csrfToken(ctx: OAuthContext, memberId: string, c: Extract<Checked, { kind: 'ok' }>, exp: number, defaultTeamId: string): string {
  const mac = createHmac('sha256', ctx.key)
    .update(JSON.stringify(['consent', memberId, c.client.id, c.redirectUri, c.rawScope, c.state, c.codeChallenge, exp, defaultTeamId]))
    .digest('base64url');
  return `${exp}.${mac}`;
}

function csrfValid(ctx: OAuthContext, memberId: string, c: Extract<Checked, { kind: 'ok' }>, token: string | undefined, now: number, defaultTeamId: string): boolean {
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token ?? '');
  if (!m) return false;
  const exp = Number(m[1]);
  if (exp <= now) return false;
  const a = Buffer.from(csrfToken(ctx, memberId, c, exp, defaultTeamId));
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
    const to: unknown = ctx.signInUrl(req.url, req);
    // A sign-in URL that is not a sendable string (an async hook's Promise, a line break) is the host's bug, not a redirect.
    if (typeof to !== 'string' || to === '' || !HEADER_VALUE.test(to)) {
      ctx.onError?.(new TypeError('pmapi oauth: signInUrl must return the sign-in URL as a string (synchronously, no line breaks)'), req);
      return errorPage('server_error', 'The sign-in page could not be reached. Try again later.', 500, false);
    }
    return { status: 303, headers: { location: to, 'cache-control': 'no-store' } };
  }
  const member = await memberState(ctx.store.db, ctx.grants, memberId);
  const deny = (why: string) => redirectTo(ctx, c.redirectUri, { error: 'access_denied', error_description: why, state: c.state });
  if (!member || !member.active) return deny('The signed-in member cannot approve apps');
  // The person's workspaces the app may reach (the signed-in membership and the person's other active ones).
  const reachable = (await personMemberships(ctx, member)).filter((m) => c.client.teamId === null || c.client.teamId === m.teamId);
  if (reachable.length === 0) return deny('This app is registered for another workspace');
  // One choice per workspace: of a person's several memberships in one workspace, the signed-in one, else the oldest that qualifies.
  const offered = reachable.map((m) => ({ m, granted: clampScopes(ctx.registry, c.scope, m.permissions) }))
    .filter((o, i, all) => o.granted.length > 0 && !all.slice(0, i).some((p) => p.granted.length > 0 && p.m.teamId === o.m.teamId));
  if (offered.length === 0) {
    return redirectTo(ctx, c.redirectUri, { error: 'invalid_scope', error_description: "Your role grants none of the requested scope", state: c.state });
  }
  const preferred = offered.find((o) => o.m.id === member.id) ?? offered[0]!;
  const now = ctx.clock.now();

  if (method === 'POST') {
    // The token binds the preselected workspace too: if it moved since the page was shown (the signed-in role lost
    // the scope), a form posted without a choice must not connect a workspace the page never named.
    if (!csrfValid(ctx, memberId, c, params.get('csrf_token') ?? undefined, now, preferred.m.teamId)) {
      return errorPage('invalid_request', 'The consent form expired or was not issued to you; start again from the app', 403);
    }
    const decision = params.get('decision');
    if (decision === 'deny') return deny('The member declined');
    if (decision !== 'allow') return errorPage('invalid_request', 'decision must be allow or deny');
    // The workspace choice (a form field, so not covered by the CSRF token): one of the person's own, checked again now.
    const chosenIds = params.getAll('workspace');
    if (chosenIds.length > 1) return redirectTo(ctx, c.redirectUri, { error: 'invalid_request', error_description: 'workspace is repeated', state: c.state });
    const chosen = chosenIds.length === 0 ? preferred : offered.find((o) => o.m.teamId === chosenIds[0]);
    if (!chosen) {
      return redirectTo(ctx, c.redirectUri, { error: 'invalid_request', error_description: 'workspace is not one the signed-in person can connect this app to', state: c.state });
    }
    const code = await issueCode(ctx.store, ctx.grants, {
      clientId: c.client.id, memberId: chosen.m.id, teamId: chosen.m.teamId, ceiling: chosen.granted, macros: c.scope.filter((s) => (SCOPE_MACROS as readonly string[]).includes(s)), redirectUri: c.redirectUri, codeChallenge: c.codeChallenge, now,
    });
    return redirectTo(ctx, c.redirectUri, { code, state: c.state });
  }

  const workspaces: ConsentWorkspace[] = [];
  for (const o of offered) {
    workspaces.push({ id: o.m.teamId, name: (await workspaceName(ctx.store.db, o.m.teamId)) ?? '', memberId: o.m.id, scopes: o.granted, scopeDescriptions: describeScopes(o.granted) });
  }
  const first = workspaces[offered.indexOf(preferred)]!;
  const fields: Record<string, string> = {};
  for (const k of PARAMS) fields[k] = params.get(k)!;
  fields.csrf_token = csrfToken(ctx, memberId, c, now + CONSENT_TTL_MS, preferred.m.teamId);
  const view: ConsentView = {
    client: { id: c.client.id, name: c.client.name },
    workspace: { id: first.id, name: first.name },
    workspaces,
    member: { id: member.id, name: member.name },
    scopes: first.scopes,
    scopeDescriptions: first.scopeDescriptions,
    redirectUri: c.redirectUri,
    formAction: `${ctx.issuer}${AUTHORIZE_PATH}`,
    fields,
  };
  if (!ctx.renderConsent) return { status: 200, headers: { ...PAGE_HEADERS }, body: defaultConsentPage(view) };
  let page: ConsentPage;
  let headers: Record<string, string>;
  try {
    page = await ctx.renderConsent(view, req);
    if (typeof page !== 'string' && (typeof page !== 'object' || page === null || typeof page.body !== 'string')) {
      throw new TypeError('pmapi oauth: renderConsent must return the HTML string or { body, headers }');
    }
    headers = typeof page === 'string' ? { ...PAGE_HEADERS } : consentHeaders(page.headers);
  } catch (err) {
    // The host's renderer failed: a plain page, nothing of the error shown; the host hears of it through onError.
    ctx.onError?.(err, req);
    return errorPage('server_error', 'The consent page could not be shown. Try again later.', 500, false);
  }
  return { status: 200, headers, body: typeof page === 'string' ? page : page.body };
}

/** Every active membership of the signed-in member's person, that one first, with the permissions each role grants. */
async function personMemberships(ctx: OAuthContext, signedIn: MemberState): Promise<MemberState[]> {
  const out: MemberState[] = [signedIn];
  for (const id of await personMemberIds(ctx.store.db, signedIn.id)) {
    if (id === signedIn.id) continue;
    const m = await memberState(ctx.store.db, ctx.grants, id);
    if (m && m.active) out.push(m);
  }
  return out;
}

/**
 * Headers a host's renderer may not change: the page holds a CSRF token and the person's data, so it is never cached
 * (by the browser, a CDN or a surrogate), re-typed or re-encoded, and the framing of the message stays the front end's.
 */
const LOCKED_HEADERS = new Set([
  'cache-control', 'pragma', 'expires', 'cdn-cache-control', 'surrogate-control', 'content-type', 'content-length', 'content-encoding',
  'location', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'trailer',
]);
/** RFC 9110 §5.1 field name (token) and §5.5 field value (visible ASCII, obs-text, space and tab: no CR, LF, NUL, nothing above U+00FF). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The consent page's headers with the host's on top (its CSP, say), except
 * {@link LOCKED_HEADERS}; a CSP without `frame-ancestors` gets
 * `frame-ancestors 'none'` (the consent screen is never framed: clickjacking).
 * Throws on headers that are not valid HTTP (the front end could not send them;
 * a line break is header injection): the renderer failed.
 */
export function consentHeaders(host: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = { ...PAGE_HEADERS };
  if (host !== undefined && (typeof host !== 'object' || host === null || Array.isArray(host))) {
    throw new TypeError('pmapi oauth: renderConsent headers must be an object of header names to string values');
  }
  for (const [k, v] of Object.entries(host ?? {})) {
    if (!HEADER_NAME.test(k)) throw new TypeError(`pmapi oauth: renderConsent header name ${JSON.stringify(k)} is not a valid HTTP header name`);
    if (typeof v !== 'string') throw new TypeError(`pmapi oauth: renderConsent header ${k} must be a string (one value per header)`);
    if (!HEADER_VALUE.test(v)) throw new TypeError(`pmapi oauth: renderConsent header ${k} holds a line break or a character HTTP cannot carry`);
    const key = k.toLowerCase();
    // CORS on the consent page would let another origin read the CSRF token with the person's cookies.
    if (LOCKED_HEADERS.has(key) || key.startsWith('access-control-')) continue;
    out[key] = v;
  }
  const csp = out['content-security-policy']!.trim().replace(/;\s*$/, '');
  if (!/(^|;)\s*frame-ancestors(\s|;|$)/i.test(csp)) out['content-security-policy'] = csp ? `${csp}; frame-ancestors 'none'` : "frame-ancestors 'none'";
  return out;
}
