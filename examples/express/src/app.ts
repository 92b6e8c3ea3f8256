import express from 'express';
import type { Pmapi } from '@pmapi/core';
import { toNodeHandler } from '@pmapi/http-node';

/**
 * An Express 5 host application with pmapi mounted under /pm: the API answers
 * at /pm/api/v3/…. The prefix is written once, in app.use — createPmapi's
 * basePath stays the path inside the mount (default /api/v3).
 */
export function createApp(api: Pmapi): express.Express {
  const app = express();
  app.get('/', (_req, res) => {
    res.type('text').send('host app');
  });
  // Body parsers of the host may run before it (express.json()): toNodeHandler takes the parsed body.
  app.use('/pm', toNodeHandler(api, { cors: { origins: ['http://localhost:5173'] } }));
  // Whatever pmapi does not serve falls through to the host's own 404.
  app.use((_req, res) => {
    res.status(404).type('text').send('host 404');
  });
  return app;
}
