import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createApp } from './app';

// `pnpm --filter @pmapi/example-express start`: pmapi under /pm in Express, over in-memory SQLite.
const api = await createPmapi({ store: await openSqliteStore() });
const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] });
const port = Number(process.env.PORT ?? 3000);
const server = createApp(api).listen(port, '127.0.0.1', () => {
  console.log(`curl -H 'Authorization: Bearer ${token}' http://127.0.0.1:${port}/pm/api/v3/members`);
});
const stop = () => server.close(() => void api.close());
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
