// The core conformance suites on a prefixed store sharing a host file (issue 16): every open makes a host file with
// its own `tasks`, `members`, `links`, `outbox`, … and an index named as one of pmapi's, and pmapi works beside them
// with tablePrefix 'pm_'. (The whole kit passes too, in about four minutes: too slow to run on every test run.)
import { afterAll } from 'vitest';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreFactory } from '@pmapi/conformance';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { smokeSuite } from '../../conformance/src/suites/smoke';
import { querySuite } from '../../conformance/src/suites/query';
import { writesSuite } from '../../conformance/src/suites/writes';
import { fastPathSuite } from '../../conformance/src/suites/fast-path';
import { tasksSuite } from '../../conformance/src/suites/tasks';
import { softDeleteEventsSuite } from '../../conformance/src/suites/soft-delete-events';
import { activitySuite } from '../../conformance/src/suites/resources/activity';
import { personalAccessTokensSuite } from '../../conformance/src/suites/personal-access-tokens';
import { webhooksSuite } from '../../conformance/src/suites/webhooks';

const dir = mkdtempSync(join(tmpdir(), 'pmapi-prefix-conf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

function hostFile(): string {
  const file = join(dir, `host-${++n}.db`);
  const db = new Database(file);
  db.exec(`
    create table tasks (id integer primary key, title text);
    create table members (handle text primary key);
    create table links (href text);
    create table outbox (seq integer primary key, payload blob);
    create index links_parent_order on links (href);
    insert into tasks (title) values ('host task');`);
  db.close();
  return file;
}

const factory: StoreFactory = {
  name: 'sqlite+prefix',
  open: (o) => openSqliteStore({
    filename: hostFile(),
    tablePrefix: 'pm_',
    // Some suites count statements by the tables they name ("from \"outbox\""): they are shown the names pmapi's code
    // uses. (table-prefix.test.ts checks the prefixed text itself.)
    ...(o?.onQuery ? { onQuery: (q: string) => o.onQuery!(q.replaceAll('"pm_', '"')) } : {}),
  }),
};

smokeSuite(factory);
querySuite(factory);
writesSuite(factory);
fastPathSuite(factory);
tasksSuite(factory);
softDeleteEventsSuite(factory);
activitySuite(factory);
personalAccessTokensSuite(factory);
webhooksSuite(factory);
