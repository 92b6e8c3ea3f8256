import { fork } from 'node:child_process';
import { rmSync } from 'node:fs';
import autocannon from 'autocannon';
import { seed } from './seed.mjs';
const file = '/tmp/prof.db';
for (const f of [file, file+'-wal', file+'-shm']) { try { rmSync(f); } catch {} }
const s = await seed(file, 100000);
const child = fork('./server-pmapi.mjs', [file], { execArgv: ['--cpu-prof', '--cpu-prof-dir=/tmp/cpuprof'], stdio: ['ignore','inherit','inherit','ipc'] });
const { port } = await new Promise((r) => child.once('message', r));
const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
const mode = process.argv[2];
const opts = mode === 'get' ? { url: `http://127.0.0.1:${port}/api/v3/tasks?projectId=${s.projectId}&limit=50`, headers } : { url: `http://127.0.0.1:${port}/api/v3/tasks`, method: 'POST', headers, body: JSON.stringify({ name: 'x', projectId: s.projectId, statusId: s.statusId }) };
const r = await new Promise((res, rej) => autocannon({ ...opts, connections: 16, duration: 5 }, (e, r) => e ? rej(e) : res(r)));
console.log(mode, r.requests.average, r.non2xx);
child.kill('SIGINT');
await new Promise((r) => child.once('exit', r));
