import { parseArgs } from 'node:util';
import { parseDatabaseArg, type DatabaseArg } from '@pmapi/core';

/**
 * The quickstart's command line, parsed and checked (unknown options, a port out of range, a `--db` URL
 * with another scheme throw). Its own module so test/readme-commands.test.ts can check the README's
 * commands against it without starting anything.
 */
export function parseQuickstartArgs(argv: string[], env: NodeJS.ProcessEnv = process.env) {
  const { values } = parseArgs({
    // `pnpm --filter … start -- --db x` (as the READMEs show) hands the script a leading `--`: not a positional.
    args: argv.filter((a, i) => i !== 0 || a !== '--'),
    options: {
      port: { type: 'string', default: '3000' },
      db: { type: 'string' },
      files: { type: 'string' },
      json: { type: 'boolean', default: false },
      'allow-private-webhooks': { type: 'boolean', default: false },
      'no-webhook-worker': { type: 'boolean', default: false },
      'no-migrate': { type: 'boolean', default: false },
      'allow-loopback-webhooks': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  const port = Number(values.port);
  if (!values.help && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new Error(`--port must be 0-65535, got '${values.port}'`);
  const db = values.db ?? env.DATABASE_URL;
  // A URL that is not postgres:// (a typo such as postgress:/x) is refused, not taken as a SQLite file name.
  const target: DatabaseArg | undefined = db && !values.help ? parseDatabaseArg(db, values.db !== undefined ? '--db' : 'DATABASE_URL') : undefined;
  return { values, port, target };
}
