/** A database named on a command line: a Postgres URL or a SQLite file. */
export type DatabaseArg = { kind: 'postgres'; connectionString: string } | { kind: 'sqlite'; filename: string };

/**
 * How pmapi's commands read `--db` (the `pmapi` CLI, the quickstart, the
 * worker example): a postgres:// or postgresql:// URL, or a SQLite file path
 * (`:memory:` too). Anything that starts like a URL with another scheme — a
 * typo such as `postgress://x`, `postgres:/x`, or `mysql://x` — is refused
 * with one line naming the problem, never taken as a file name. A one-letter
 * "scheme" is a Windows drive (`C:\pm.db`), so it is a path. The value is not
 * echoed (a URL may hold a password).
 *
 * @param name what to call the value in the message (`--db`, `DATABASE_URL`).
 * @example
 * parseDatabaseArg('postgres://postgres@127.0.0.1:5432/pm') // { kind: 'postgres', connectionString: '…' }
 * parseDatabaseArg('./pmapi.db')                          // { kind: 'sqlite', filename: './pmapi.db' }
 */
export function parseDatabaseArg(value: string, name = '--db'): DatabaseArg {
  if (value.trim() === '') throw new Error(`${name} is empty; give postgres://user@host:5432/database or a SQLite file path such as ./pmapi.db`);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(value)?.[1];
  if (scheme === undefined) return { kind: 'sqlite', filename: value };
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw new Error(`${name} starts with '${scheme}:' but is not a postgres:// (or postgresql://) URL; give postgres://user@host:5432/database or a SQLite file path such as ./pmapi.db`);
  }
  try {
    new URL(value);
  } catch {
    throw new Error(`${name} is not a valid postgres:// URL (check the host, port and any characters in the password that need %-escaping)`);
  }
  return { kind: 'postgres', connectionString: value };
}
