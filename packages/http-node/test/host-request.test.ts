import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPmapi, type HttpRequest, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler, toFetchHandler } from '@pmapi/http-node';

// Issue 17: the front ends hand the host's own request object to the OAuth hooks (Express's req, the fetch Request).
describe('[http-node] the host request reaches oauth.currentMember and renderConsent', () => {
  let api: Pmapi;
  let memberId: string;
  let clientId: string;
  const seen: unknown[] = [];
  const issuer = 'http://127.0.0.1:1';
  const q = () => new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1/cb', scope: 'read', state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
  });

  beforeAll(async () => {
    api = await createPmapi({
      store: await openSqliteStore(), rateLimiter: false,
      oauth: {
        issuer,
        currentMember: (_req: HttpRequest, host: unknown) => {
          seen.push(host);
          if (host instanceof Request) return host.headers.get('x-host-session') === 'ok' ? memberId : null;
          return (host as IncomingMessage & { session?: { memberId?: string } }).session?.memberId ?? null;
        },
        signInUrl: (r) => `/login?next=${encodeURIComponent(r)}`,
        renderConsent: async (view, host) => `<p>${host instanceof Request ? 'fetch' : 'node'} ${view.member.name}</p>`,
      },
    });
    const ws = await api.admin.createWorkspace({ name: 'Host', owner: { name: 'Hana' } });
    memberId = ws.ownerMemberId;
    clientId = (await api.admin.registerOAuthClient({ name: 'CLI', type: 'public', redirectUris: ['http://127.0.0.1/cb'] })).clientId;
  });
  afterAll(async () => { await api.close(); });

  it("toNodeHandler: the node/Express req (with the session a host middleware put on it) is the hook's second argument", async () => {
    const pm = toNodeHandler(api);
    const server = http.createServer((req, res) => {
      // What express-session does: the session lives on the host's request object, not in pmapi's headers.
      if (req.headers.cookie === 'sid=1') (req as IncomingMessage & { session?: object }).session = { memberId };
      pm(req, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const page = await fetch(`${base}/oauth/authorize?${q()}`, { headers: { cookie: 'sid=1' } });
      expect(page.status).toBe(200);
      expect(await page.text()).toBe('<p>node Hana</p>');
      expect(seen.at(-1)).toBeInstanceOf(http.IncomingMessage);
      const anon = await fetch(`${base}/oauth/authorize?${q()}`, { redirect: 'manual' });
      expect(anon.status).toBe(303);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('toFetchHandler: the fetch Request is the second argument', async () => {
    const pm = toFetchHandler(api);
    const page = await pm(new Request(`${issuer}/oauth/authorize?${q()}`, { headers: { 'x-host-session': 'ok' } }));
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('<p>fetch Hana</p>');
    const anon = await pm(new Request(`${issuer}/oauth/authorize?${q()}`));
    expect(anon.status).toBe(303);
  });
});
