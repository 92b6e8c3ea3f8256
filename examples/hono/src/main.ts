import { serve } from '@hono/node-server';
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createApp } from './app';

// `pnpm --filter @pmapi/example-hono start`: pmapi in Hono on Node, over in-memory SQLite.
const api = await createPmapi({ store: await openSqliteStore() });
const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] });
const port = Number(process.env.PORT ?? 3000);
const server = serve({ fetch: createApp(api).fetch, port, hostname: '127.0.0.1' }, () => {
  console.log(`curl -H 'Authorization: Bearer ${token}' http://127.0.0.1:${port}/api/v3/members`);
});
const stop = () => server.close(() => void api.close());
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
