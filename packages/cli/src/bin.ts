#!/usr/bin/env node
import { main } from './index';

// `pmapi migrate --print | head`: a reader that stops early is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
process.exitCode = await main(process.argv.slice(2));
