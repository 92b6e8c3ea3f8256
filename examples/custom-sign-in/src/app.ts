import { createHash, timingSafeEqual } from 'node:crypto';
import express from 'express';
import session from 'express-session';
import type { OAuthOptions, Pmapi } from '@pmapi/core';
import { toNodeHandler } from '@pmapi/http-node';
import { escape, renderConsent } from './consent';

// The host's session carries who signed in (express-session keeps it server-side; the cookie holds an id).
declare module 'express-session' {
  interface SessionData {
    memberId?: string;
    displayName?: string;
  }
}

/** One of the host's own accounts: the host checks the password; pmapi only learns the member id. */
export interface Account {
  username: string;
  password: string;
  displayName: string;
  /** The pmapi member this account signs in as (a person in several workspaces picks one at consent). */
  memberId: string;
}

/**
 * pmapi's OAuth options for this host: the signed-in member comes from the
 * host's session on its own request object (`host` is Express's `req`,
 * handed through by toNodeHandler); not signed in, the person is sent to
 * the host's /login; the consent page is the host's, branded and async.
 */
export function hostOAuth(issuer: string): OAuthOptions<express.Request> {
  return {
    issuer,
    currentMember: (_req, host) => host.session?.memberId ?? null,
    signInUrl: (returnTo) => `/login?next=${encodeURIComponent(returnTo)}`,
    renderConsent,
  };
}

/** Only a path of this site is a place to go back to after sign-in (no open redirect: not `//evil`, not `https://…`). */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export const STYLESHEET = `body { font: 16px/1.5 Georgia, serif; background: #fdf6e3; color: #073642; margin: 0; }
header.brand { background: #268bd2; color: #fff; padding: 1rem 2rem; font-weight: bold; }
main { max-width: 34rem; margin: 2rem auto; background: #fff; padding: 2rem; border-radius: 10px; }
button { font: inherit; padding: .5rem 1.2rem; border-radius: 6px; border: 1px solid #586e75; margin-right: .5rem; }
button[value="allow"] { background: #268bd2; color: #fff; border-color: #268bd2; }
fieldset { border: 1px solid #93a1a1; border-radius: 6px; margin: 1rem 0; }
`;

const page = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/static/app.css"></head>
<body><header class="brand">Acme Projects</header><main>${body}</main></body>
</html>
`;

/**
 * The host: its own sign-in page and session, its stylesheet, and pmapi
 * mounted under /pm (API at /pm/api/v3, OAuth at {issuer}/oauth/…).
 */
export function createApp(api: Pmapi, o: { accounts: Account[]; sessionSecret: string; secureCookies?: boolean }): express.Express {
  const app = express();
  app.use(session({
    secret: o.sessionSecret,
    name: 'acme.sid',
    resave: false,
    saveUninitialized: false,
    // lax: the cookie rides the top-level GET an app's authorization link makes, not cross-site POSTs.
    cookie: { httpOnly: true, sameSite: 'lax', secure: o.secureCookies ?? false },
  }));

  app.get('/static/app.css', (_req, res) => {
    res.type('text/css').set('cache-control', 'public, max-age=3600').send(STYLESHEET);
  });
  app.get('/', (req, res) => {
    res.type('html').send(page('Acme', req.session.memberId ? `<p>Signed in as ${escape(req.session.displayName ?? '')}.</p>` : '<p><a href="/login">Sign in</a></p>'));
  });

  app.get('/login', (req, res) => {
    res.set('content-security-policy', "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'");
    res.type('html').send(page('Sign in', `<h1>Sign in to Acme</h1>
<form method="post" action="/login">
  <input type="hidden" name="next" value="${escape(safeNext(req.query.next))}">
  <label>Username <input name="username" autocomplete="username" required></label><br>
  <label>Password <input name="password" type="password" autocomplete="current-password" required></label><br>
  <button type="submit">Sign in</button>
</form>`));
  });
  app.post('/login', express.urlencoded({ extended: false, limit: '4kb' }), (req, res, next) => {
    const { username, password } = (req.body ?? {}) as Record<string, string | undefined>;
    const account = o.accounts.find((a) => a.username === username);
    // Compare digests (equal length) so the check takes the same time whatever the guess.
    if (!account || typeof password !== 'string' || !timingSafeEqual(digest(password), digest(account.password))) {
      res.status(401).type('html').send(page('Sign in', '<p>Wrong username or password. <a href="/login">Try again</a></p>'));
      return;
    }
    // A new session id on sign-in (no session fixation).
    req.session.regenerate((err) => {
      if (err) return next(err);
      req.session.memberId = account.memberId;
      req.session.displayName = account.displayName;
      req.session.save((e) => (e ? next(e) : res.redirect(303, safeNext(req.body.next))));
    });
  });
  app.post('/logout', (req, res, next) => {
    req.session.destroy((err) => (err ? next(err) : res.redirect(303, '/')));
  });

  // pmapi under /pm: the API (/pm/api/v3/…) and, the issuer being {origin}/pm, the OAuth endpoints
  // (/pm/oauth/authorize, /pm/oauth/token, /pm/.well-known/oauth-authorization-server).
  const pm = toNodeHandler(api);
  app.use('/pm', pm);
  // RFC 8414 §3.1 puts the issuer's path after the well-known segment: /.well-known/oauth-authorization-server/pm
  // is at the root, outside the mount — the form stock clients (openid-client, oauth4webapi) ask for.
  if (api.oauth) app.get(`/.well-known/oauth-authorization-server${new URL(api.oauth.issuer).pathname}`, pm);
  return app;
}
