import { parseArgs } from 'node:util';

/**
 * An API process's command line, parsed and checked (unknown options, a bad `--port` or `--post-limit`,
 * no database, a `--db` that is not a postgres:// URL throw). Its own module so
 * test/readme-commands.test.ts can check the README's commands against it without starting anything.
 */
export function parseApiProcessArgs(argv: string[], env: NodeJS.ProcessEnv = process.env) {
  const { values } = parseArgs({
    // `pnpm --filter … start -- --db x` (as the READMEs show) hands the script a leading `--`: not a positional.
    args: argv.filter((a, i) => i !== 0 || a !== '--'),
    options: {
      db: { type: 'string' },
      port: { type: 'string', default: '3000' },
      seed: { type: 'boolean', default: false },
      'post-limit': { type: 'string' },
      json: { type: 'boolean', default: false },
      'allow-loopback-webhooks': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  if (values.help) return { values, port: 0, postLimit: undefined, db: '' };
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port!) || port > 65535) throw new Error(`--port must be 0-65535, got '${values.port}'`);
  const postLimit = values['post-limit'] === undefined ? undefined : Number(values['post-limit']);
  if (postLimit !== undefined && !(/^\d+$/.test(values['post-limit']!) && postLimit >= 1)) {
    throw new Error(`--post-limit must be a whole number ≥ 1, got '${values['post-limit']}'`);
  }
  const db = values.db ?? env.DATABASE_URL;
  if (!db) throw new Error('--db (or DATABASE_URL) is required: the postgres:// URL every API process shares');
  if (!/^postgres(ql)?:\/\//.test(db)) throw new Error(`--db must be a postgres:// (or postgresql://) URL shared by every process, got '${db.replace(/\/\/[^@/]*@/, '//…@')}'`);
  return { values, port, postLimit, db };
}
