import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Test helpers that run a built program (an example's dist/main.js, a CLI) as a child process: the
 * examples' tests and test/readme-commands.test.ts share them. DATABASE_URL is cleared unless `env`
 * sets it, so a developer's own database never leaks into a test.
 */
export interface RunOptions {
  /** Extra environment variables. */
  env?: NodeJS.ProcessEnv;
  /** run: SIGKILL the program and fail if it has not exited by then (default 20 s). */
  ms?: number;
}

function spawnBuilt(main: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  if (!existsSync(main)) throw new Error(`${main} is missing: run pnpm build (or pnpm --filter <its package> build)`);
  return spawn(process.execPath, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DATABASE_URL: '', ...env } });
}

/**
 * Run `node main ...args` to its exit: its code, stdout and stderr. With `stopAtFirstLine`, SIGTERM it
 * once it prints its first line (a server's ready line), so a start-up that succeeds ends too.
 */
export function run(main: string, args: string[], o: RunOptions & { stopAtFirstLine?: boolean } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnBuilt(main, args, o.env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
    if (o.stopAtFirstLine && stdout.includes('\n') && child.exitCode === null && !child.killed) child.kill('SIGTERM');
  });
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${main} did not exit: ${stderr}`)); }, o.ms ?? 20_000);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

export interface Started<T> {
  child: ChildProcess;
  /** The first line it printed, parsed as JSON (the examples' ready line). */
  first: T;
  /** Everything printed so far. */
  stdout: () => string;
  stderr: () => string;
  /** Its exit code, once it exits. */
  exited: Promise<number | null>;
}

/** Start `node main ...args` and resolve once it prints its first line (rejects if it exits first). */
export function start<T = unknown>(main: string, args: string[], o: Pick<RunOptions, 'env'> = {}): Promise<Started<T>> {
  const child = spawnBuilt(main, args, o.env);
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    let ready = false;
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const nl = out.indexOf('\n');
      if (ready || nl === -1) return;
      ready = true;
      resolve({ child, first: JSON.parse(out.slice(0, nl)) as T, stdout: () => out, stderr: () => err, exited });
    });
    void exited.then((code) => reject(new Error(`${main} exited with ${code}: ${err}`)));
  });
}

/** Send `signal`; resolve with the exit code and how long after the signal it came (SIGKILL and fail after `ms`). */
export function exitAfter(child: ChildProcess, signal: NodeJS.Signals, ms = 8_000): Promise<{ code: number | null; signal: string | null; tookMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no exit within ${ms} ms of ${signal}`)); }, ms);
    child.once('exit', (code, sig) => { clearTimeout(timer); resolve({ code, signal: sig, tookMs: Date.now() - t0 }); });
    child.kill(signal);
  });
}
