import { Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { Pmapi } from '@pmapi/core';
import { toFetchHandler } from '@pmapi/http-node/fetch';

/**
 * A Hono app serving pmapi through its fetch handler: one line, `app.all('/api/*', …)`.
 * On Node (@hono/node-server) the socket's address is passed on for rate limits.
 */
export function createApp(api: Pmapi): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const pm = toFetchHandler(api);
  app.get('/', (c) => c.text('host app'));
  app.all('/api/*', (c) => pm(c.req.raw, { remoteAddress: c.env?.incoming?.socket.remoteAddress }));
  return app;
}
