import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SeededTeam } from './seed';

/** The quickstart's stand-in for the embedding application's own sign-in: a cookie naming a member. */
export const DEMO_COOKIE = 'pmapi_demo_member';

export function memberFromCookie(cookieHeader: string | string[] | undefined): string | null {
  const raw = Array.isArray(cookieHeader) ? cookieHeader.join(';') : cookieHeader ?? '';
  for (const part of raw.split(';')) {
    const [k, v] = part.trim().split('=');
    if (k === DEMO_COOKIE && v && /^[0-9A-Za-z_!]+$/.test(v)) return v;
  }
  return null;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Only come back to the authorization endpoint: no open redirect. */
function safeReturn(returnTo: string | null): string {
  return returnTo && returnTo.startsWith('/oauth/authorize?') ? returnTo : '/';
}

/**
 * GET /demo/sign-in lists the demo members; POST signs one in (sets the
 * cookie) and goes back to the authorization request. Demo only: no password.
 */
export function demoSignIn(teams: SeededTeam[], names: Map<string, string>) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? '/', 'http://quickstart');
    if (url.pathname !== '/demo/sign-in') return false;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        const member = form.get('memberId') ?? '';
        const known = teams.some((t) => t.members.some((m) => m.id === member));
        if (!known) {
          res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end('Unknown member');
          return;
        }
        res.writeHead(303, { location: safeReturn(form.get('returnTo')), 'set-cookie': `${DEMO_COOKIE}=${member}; Path=/; HttpOnly; SameSite=Lax` }).end();
      });
      return true;
    }
    const returnTo = safeReturn(url.searchParams.get('returnTo'));
    const rows = teams
      .flatMap((t, i) => t.members.map((m) => ({ team: i === 0 ? 'Acme' : 'Globex', ...m })))
      .map((m) => `<li><form method="post" action="/demo/sign-in"><input type="hidden" name="memberId" value="${esc(m.id)}"><input type="hidden" name="returnTo" value="${esc(returnTo)}"><button type="submit">Sign in as ${esc(names.get(m.id) ?? m.id)} (${esc(m.role)}, ${esc(m.team)})</button></form></li>`)
      .join('\n');
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in — pmapi quickstart</title></head>
<body><main><h1>Sign in to the demo</h1><p>Pick a demo member. (Your application signs people in its own way.)</p><ul>${rows}</ul></main></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
    return true;
  };
}
