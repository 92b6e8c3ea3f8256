import { parseArgs } from 'node:util';

/**
 * The worker's command line, parsed and checked (unknown options, a bad `--interval`, no database, a
 * `--db` URL with another scheme throw). Its own module so test/readme-commands.test.ts can check the
 * README's commands against it without starting anything.
 */
export function parseWorkerArgs(argv: string[], env: NodeJS.ProcessEnv = process.env) {
  const { values } = parseArgs({
    // `pnpm --filter … start -- --db x` (as the READMEs show) hands the script a leading `--`: not a positional.
    args: argv.filter((a, i) => i !== 0 || a !== '--'),
    options: {
      db: { type: 'string' },
      interval: { type: 'string', default: '1000' },
      'allow-private-webhooks': { type: 'boolean', default: false },
      'allow-loopback-webhooks': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  if (values.help) return { values, interval: 0, db: '' };
  const interval = Number(values.interval);
  if (!Number.isInteger(interval) || interval < 10) throw new Error(`--interval must be a whole number of milliseconds ≥ 10, got '${values.interval}'`);
  const db = values.db ?? env.DATABASE_URL;
  if (!db) throw new Error('--db (or DATABASE_URL) is required: the database the API processes write to');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(db)?.[1];
  if (scheme !== undefined && !/^postgres(ql)?:\/\//.test(db)) throw new Error(`--db starts with '${scheme}:' but is not a postgres:// (or postgresql://) URL`);
  return { values, interval, db };
}
