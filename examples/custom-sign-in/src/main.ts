import { randomBytes } from 'node:crypto';
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createApp, hostOAuth } from './app';
import { seed } from './seed';

// `pnpm --filter @pmapi/example-custom-sign-in start`: the host's sign-in page, pmapi under /pm, OAuth issuer {origin}/pm.
const port = Number(process.env.PORT ?? 3000);
const origin = `http://127.0.0.1:${port}`;
const redirectUri = 'http://127.0.0.1:8400/callback';
const api = await createPmapi({ store: await openSqliteStore(), oauth: hostOAuth(`${origin}/pm`) });
const { patAtAcme, clientId } = await seed(api, redirectUri);
const app = createApp(api, {
  accounts: [{ username: 'pat', password: process.env.DEMO_PASSWORD ?? 'correct horse', displayName: 'Pat', memberId: patAtAcme.id }],
  sessionSecret: process.env.SESSION_SECRET ?? randomBytes(32).toString('hex'),
});
const server = app.listen(port, '127.0.0.1', () => {
  console.log(`issuer ${origin}/pm, client_id ${clientId}, redirect_uri ${redirectUri}; sign in as pat`);
});
const stop = () => server.close(() => void api.close());
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
