import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { main as pmapiCli } from '../packages/cli/src/index';
import { parseQuickstartArgs } from '../examples/quickstart/src/args';
import { parseWorkerArgs } from '../examples/worker/src/args';
import { parseApiProcessArgs } from '../examples/two-processes/src/args';
import { exitAfter, start } from './processes';
import { readmes } from './readmes';

// Issue 16 "every README snippet is exercised by a test": the shell blocks (```sh / bash / shell / console)
// of README.md, packages/*/README.md and examples/*/README.md, found afresh on each run. Every command line
// (comments and blank lines skipped, `\` continuations joined, `a && b` split, `VAR=x cmd` read as an
// environment) must be a form this file knows, and is checked against the workspace:
// - `pnpm [--filter <pkg>] <script> [args]`: the package exists, the script exists in its package.json; a
//   script `node <file>` gets the args (pnpm hands them on, a `--` included) and is checked as `node <file>`;
//   a script `pnpm …` is checked in turn; any other script takes no args here. `pnpm install`, `corepack enable`.
// - `node <file> [args]`: the file exists, or is what the package's tsup entry builds (`dist/x.js` ← `src/x.ts`);
//   the args go through that program's own parser (src/args.ts of the examples, generate.mjs's
//   parseGenerateArgs), which throws on an unknown or misspelt option and on bad values.
// - `npx pmapi …` / `pmapi …`: the CLI's main, run for real in-process — a SQLite file path is moved into a
//   temporary folder, a postgres:// URL's host and port become 127.0.0.1:1 (refused at once: exit 1 is the
//   expected outcome, exit 2 means the arguments were refused).
// - `npm install <pkgs>`: every one a publishable workspace package. `npx vitest run <paths>`: the paths
//   exist. `npx jest`: a workspace package runs jest. `npx openapi-typescript <url> -o <file>`: the README's
//   package depends on it and the URL is the served document. `createdb -h 127.0.0.1 …`.
// - `curl …`: known flags only, a 127.0.0.1 URL whose method and path are an operation of the OpenAPI
//   document (api.openapi()), a JSON body that parses.
// Anything else fails the test, so a new README's commands must be covered here. Then the cheap and safe
// ones run for real on 127.0.0.1: the quickstart and the worker with the README's arguments (a temporary
// database file; --port 0 --json added), the README's curl walk-through against that quickstart, and the
// README's openapi-typescript command against its document.

const root = fileURLToPath(new URL('..', import.meta.url));

export interface Command {
  readme: string;
  line: number;
  env: Record<string, string>;
  argv: string[];
}

/** What a command resolved to: a program the test knows and the arguments it gets. */
interface Invocation {
  cmd: Command;
  program: string;
  args: string[];
  env: Record<string, string>;
}

/** Shell words of one line: quotes removed, `$VAR` / `${VAR}` expanded from vars (kept as written when unset), `#` comments dropped; `&&` and `;` split commands. */
export function shellWords(line: string, vars: Record<string, string> = {}): string[][] {
  const commands: string[][] = [[]];
  let word: string | undefined;
  const push = () => {
    if (word !== undefined) commands[commands.length - 1]!.push(word);
    word = undefined;
  };
  const expand = (i: number): [string, number] => {
    const m = /^\$(?:\{(\w+)\}|(\w+))/.exec(line.slice(i));
    if (!m) return ['$', i + 1];
    const name = (m[1] ?? m[2])!;
    return [vars[name] ?? m[0], i + m[0].length];
  };
  for (let i = 0; i < line.length; ) {
    const ch = line[i]!;
    if (/\s/.test(ch)) {
      push();
      i++;
    } else if (ch === '#' && word === undefined) {
      break;
    } else if (line.startsWith('&&', i) || ch === ';') {
      push();
      commands.push([]);
      i += ch === ';' ? 1 : 2;
    } else if (ch === '|' || ch === '>' || ch === '<' || ch === '`' || (ch === '&' && !line.startsWith('&&', i))) {
      throw new Error(`'${ch}' (pipes, redirections, background jobs, backquotes) is not a form this test knows`);
    } else if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated single quote');
      word = (word ?? '') + line.slice(i + 1, end);
      i = end + 1;
    } else if (ch === '"') {
      word = word ?? '';
      for (i++; i < line.length && line[i] !== '"'; ) {
        if (line[i] === '\\' && i + 1 < line.length) {
          word += line[i + 1];
          i += 2;
        } else if (line[i] === '$') {
          const [v, next] = expand(i);
          word += v;
          i = next;
        } else word += line[i++];
      }
      if (i >= line.length) throw new Error('unterminated double quote');
      i++;
    } else if (ch === '$') {
      const [v, next] = expand(i);
      word = (word ?? '') + v;
      i = next;
    } else if (ch === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[i + 1];
      i += 2;
    } else {
      word = (word ?? '') + ch;
      i++;
    }
  }
  push();
  return commands.filter((c) => c.length > 0);
}

/** The command lines of the shell blocks of one README's text. */
export function shellCommands(readme: string, text: string, vars: Record<string, string> = {}): Command[] {
  const out: Command[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```(sh|bash|shell|console|zsh)\s*$/.test(lines[i]!)) continue;
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) {
      const start = i;
      let line = lines[i]!.replace(/^\s*\$ /, '');
      while (/\\\s*$/.test(line) && i + 1 < lines.length) line = line.replace(/\\\s*$/, ' ') + lines[++i]!;
      if (line.trim() === '' || line.trim().startsWith('#')) continue;
      let words: string[][];
      try {
        words = shellWords(line, vars);
      } catch (err) {
        out.push({ readme, line: start + 1, env: {}, argv: [`<unparsable: ${(err as Error).message}>`] });
        continue;
      }
      for (const w of words) {
        const env: Record<string, string> = {};
        while (w.length > 0 && /^[A-Za-z_]\w*=/.test(w[0]!)) {
          const a = w.shift()!;
          env[a.slice(0, a.indexOf('='))] = a.slice(a.indexOf('=') + 1);
        }
        out.push({ readme, line: start + 1, env, argv: w });
      }
    }
  }
  return out;
}

type Pkg = { name: string; private?: boolean; scripts?: Record<string, string>; bin?: Record<string, string>; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
const readPkg = (dir: string) => JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Pkg;

/** Workspace package name → folder (relative to the root; '' for the root). */
function workspace(): Map<string, string> {
  const out = new Map<string, string>([[readPkg('').name, '']]);
  for (const dir of ['packages', 'examples']) {
    for (const d of readdirSync(join(root, dir))) if (existsSync(join(root, dir, d, 'package.json'))) out.set(readPkg(`${dir}/${d}`).name, `${dir}/${d}`);
  }
  if (existsSync(join(root, 'bench/package.json'))) out.set(readPkg('bench').name, 'bench');
  return out;
}

/** Environment variables README commands may set (each read by the program or tool it is set for). */
const KNOWN_ENV = new Set(['DATABASE_URL', 'PMAPI_SKIP_BUILD', 'PMAPI_SECRET', 'NODE_OPTIONS']);

let openapiPaths: Promise<Array<{ re: RegExp; methods: Set<string> }>> | undefined;
/** The operations of the v3 OpenAPI document, as path patterns under /api/v3. */
function operations() {
  openapiPaths ??= (async () => {
    const api = await createPmapi({ store: await openSqliteStore() });
    try {
      const doc = api.openapi() as unknown as { paths: Record<string, Record<string, unknown>> };
      return Object.entries(doc.paths).map(([p, ops]) => ({
        re: new RegExp(`^${api.basePath}${p.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
        methods: new Set(Object.keys(ops).map((m) => m.toUpperCase())),
      }));
    } finally {
      await api.close();
    }
  })();
  return openapiPaths;
}

/** Checks the commands of shell blocks; `run` makes the CLI's SQLite commands run in tmp. */
export class CommandChecker {
  readonly invocations: Invocation[] = [];
  private readonly packages = workspace();
  constructor(private readonly tmp: string) {}

  /** The problem with a command, or undefined when it is known and checks out. */
  async check(cmd: Command): Promise<string | undefined> {
    try {
      for (const name of Object.keys(cmd.env)) if (!KNOWN_ENV.has(name)) throw new Error(`environment variable ${name} is not one the test knows a program reads`);
      await this.dispatch(cmd, cmd.argv, cmd.env);
      return undefined;
    } catch (err) {
      return `${cmd.readme}:${cmd.line}: \`${[...Object.entries(cmd.env).map(([k, v]) => `${k}=${v}`), ...cmd.argv].join(' ')}\`: ${(err as Error).message}`;
    }
  }

  private async dispatch(cmd: Command, argv: string[], env: Record<string, string>): Promise<void> {
    const [tool, ...args] = argv;
    switch (tool) {
      case 'corepack':
        if (args.join(' ') !== 'enable') throw new Error('only `corepack enable` is known');
        return;
      case 'pnpm':
        return this.pnpm(cmd, args, env);
      case 'node':
        return this.node(cmd, join(root, args[0] ?? ''), args.slice(1), env);
      case 'npm':
        return this.npmInstall(args);
      case 'pmapi':
        return this.node(cmd, join(root, this.bin('@pmapi/cli', 'pmapi')), args, env);
      case 'npx':
        return this.npx(cmd, args, env);
      case 'createdb':
        return this.createdb(args);
      case 'curl':
        return void (await curlRequest(args));
      default:
        throw new Error(`'${tool}' is not a command form this test knows (extend test/readme-commands.test.ts)`);
    }
  }

  private bin(pkg: string, name: string): string {
    const dir = this.packages.get(pkg);
    const bin = dir !== undefined ? readPkg(dir).bin?.[name] : undefined;
    if (dir === undefined || bin === undefined) throw new Error(`no workspace package ${pkg} with a '${name}' bin`);
    return join(dir, bin);
  }

  private async pnpm(cmd: Command, args: string[], env: Record<string, string>): Promise<void> {
    let dir = '';
    let rest = args;
    if (rest[0] === '--filter' || rest[0] === '-F') {
      const found = this.packages.get(rest[1] ?? '');
      if (found === undefined) throw new Error(`no workspace package named '${rest[1]}'`);
      dir = found;
      rest = rest.slice(2);
    }
    if (rest[0] === 'install') {
      if (rest.length > 1 || dir !== '') throw new Error('only a bare `pnpm install` is known');
      return;
    }
    if (rest[0] === 'run') rest = rest.slice(1);
    const [script, ...extra] = rest;
    if (script === undefined || script.startsWith('-')) throw new Error(`pnpm option '${script}' is not one this test knows`);
    const pkg = readPkg(dir);
    const text = pkg.scripts?.[script];
    if (text === undefined) throw new Error(`${pkg.name} has no script '${script}' (scripts: ${Object.keys(pkg.scripts ?? {}).join(', ')})`);
    const words = shellWords(text);
    if (words.length === 1 && words[0]![0] === 'node' && words[0]![1] && !words[0]![1].startsWith('-')) {
      return this.node(cmd, join(root, dir, words[0]![1]), [...words[0]!.slice(2), ...extra], env);
    }
    if (words.length === 1 && words[0]![0] === 'pnpm' && dir === '') return this.pnpm(cmd, [...words[0]!.slice(1), ...extra], env);
    if (extra.length > 0) throw new Error(`${pkg.name}'s script '${script}' (${text}) is not a node program: the test does not know what the arguments ${extra.join(' ')} do there`);
  }

  private async node(cmd: Command, file: string, args: string[], env: Record<string, string>): Promise<void> {
    const rel = relative(root, file);
    if (!existsSync(file)) {
      const m = /^(.*)\/dist\/(.+)\.js$/.exec(rel);
      const tsup = m ? join(root, m[1]!, 'tsup.config.ts') : undefined;
      if (!m || !tsup || !existsSync(tsup) || !readFileSync(tsup, 'utf8').includes(`'src/${m[2]}.ts'`)) {
        throw new Error(`no file ${rel}, and no tsup entry of its package builds it`);
      }
    }
    const parser = PROGRAMS[rel];
    if (!parser) throw new Error(`no argument parser known for ${rel} (add it to PROGRAMS)`);
    const merged = { ...process.env, ...env };
    try {
      await parser.call(this, args, merged);
    } catch (err) {
      throw new Error(`${rel} refuses the arguments: ${(err as Error).message}`);
    }
    this.invocations.push({ cmd, program: rel, args, env });
  }

  /** `pmapi …` run for real: SQLite files in tmp, a Postgres server refused at once (127.0.0.1:1). */
  async cli(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
    const dir = mkdtempSync(join(this.tmp, 'cli-'));
    const i = args.indexOf('--db');
    const db = i >= 0 ? args[i + 1] : undefined;
    const local = [...args];
    const postgres = db !== undefined && /^postgres(ql)?:\/\//.test(db);
    if (db !== undefined && i + 1 < args.length) local[i + 1] = postgres ? db.replace(/@[^/@]+\//, '@127.0.0.1:1/') : join(dir, basename(db));
    const out: string[] = [];
    const err: string[] = [];
    const code = await pmapiCli(local, { out: (l) => out.push(l), err: (l) => err.push(l) }, { ...env, DATABASE_URL: undefined });
    if (code === 2) throw new Error(err.join('\n'));
    if (!postgres && code !== 0) throw new Error(`exit ${code}: ${err.join('\n')}`);
    if (postgres && !/ECONNREFUSED|connect/i.test(err.join('\n'))) throw new Error(`expected the refused connection, got exit ${code}: ${err.join('\n')}`);
    if (!postgres && !/^(applied |pmapi migrate|-- pmapi migrate --print)/m.test(out.join('\n'))) throw new Error(`unexpected output:\n${out.join('\n')}`);
  }

  private npmInstall(args: string[]): void {
    if (args[0] !== 'install') throw new Error('only `npm install` is known');
    const names = args.slice(1).filter((a) => a !== '--save-dev' && a !== '-D');
    if (args.slice(1).some((a) => a.startsWith('-') && a !== '--save-dev' && a !== '-D')) throw new Error('an npm option this test does not know');
    if (names.length === 0) throw new Error('no package named');
    for (const n of names) {
      const dir = this.packages.get(n);
      if (dir === undefined) throw new Error(`${n} is not a package of this workspace`);
      if (readPkg(dir).private) throw new Error(`${n} is private: it is not published`);
    }
  }

  private async npx(cmd: Command, args: string[], env: Record<string, string>): Promise<void> {
    const [tool, ...rest] = args;
    const readmeDir = dirname(cmd.readme);
    if (tool === 'pmapi') return this.node(cmd, join(root, this.bin('@pmapi/cli', 'pmapi')), rest, env);
    if (tool === 'vitest') {
      if (rest[0] !== 'run' || rest.length < 2) throw new Error('only `npx vitest run <paths>` is known');
      for (const p of rest.slice(1)) if (p.startsWith('-') || !existsSync(join(root, p))) throw new Error(`no such path ${p}`);
      return;
    }
    if (tool === 'jest') {
      if (rest.length > 0) throw new Error('only a bare `npx jest` is known');
      if (env.NODE_OPTIONS !== '--experimental-vm-modules') throw new Error('jest runs pmapi (ES modules) only with NODE_OPTIONS=--experimental-vm-modules');
      const runs = [...this.packages.values()].some((d) => readPkg(d).devDependencies?.jest && /experimental-vm-modules .*jest/.test(Object.values(readPkg(d).scripts ?? {}).join('\n')));
      if (!runs) throw new Error('no workspace package runs jest that way');
      return;
    }
    if (tool === 'openapi-typescript') {
      const pkg = readPkg(readmeDir === '.' ? '' : readmeDir);
      if (!pkg.devDependencies?.['openapi-typescript'] && !pkg.dependencies?.['openapi-typescript']) throw new Error(`${pkg.name} does not depend on openapi-typescript`);
      const { url, out } = openapiTypescriptArgs(rest);
      if (!out) throw new Error('no -o <file>');
      const u = new URL(url);
      if (u.hostname !== '127.0.0.1' || u.pathname !== '/api/v3/openapi.json') throw new Error(`${url} is not the document a local server serves (http://127.0.0.1:<port>/api/v3/openapi.json)`);
      this.invocations.push({ cmd, program: 'openapi-typescript', args: rest, env });
      return;
    }
    throw new Error(`npx ${tool} is not a command form this test knows`);
  }

  private createdb(args: string[]): void {
    const positional: string[] = [];
    for (let i = 0; i < args.length; i++) {
      if (args[i] === '-h') {
        if (args[++i] !== '127.0.0.1') throw new Error('createdb -h must be 127.0.0.1');
      } else if (args[i] === '-U' || args[i] === '-p') i++;
      else if (args[i]!.startsWith('-')) throw new Error(`createdb option ${args[i]} is not one this test knows`);
      else positional.push(args[i]!);
    }
    if (positional.length !== 1 || !/^\w+$/.test(positional[0]!)) throw new Error('createdb takes one database name');
  }
}

/** node programs the READMEs run, by path from the root, with their own argument parsers. */
const PROGRAMS: Record<string, (this: CommandChecker, args: string[], env: NodeJS.ProcessEnv) => unknown> = {
  'examples/quickstart/dist/main.js': (a, env) => parseQuickstartArgs(a, env),
  'examples/worker/dist/main.js': (a, env) => parseWorkerArgs(a, env),
  'examples/two-processes/dist/main.js': (a, env) => parseApiProcessArgs(a, env),
  'examples/typed-client/scripts/generate.mjs': async (a) => {
    const file = '../examples/typed-client/scripts/generate.mjs';
    const { parseGenerateArgs } = (await import(file)) as { parseGenerateArgs: (args: string[]) => { url?: string } };
    const { url } = parseGenerateArgs(a);
    if (url !== undefined && new URL(url).hostname !== '127.0.0.1') throw new Error(`--url ${url} is not a local server`);
  },
  'packages/cli/dist/bin.js': function (a, env) {
    return this.cli(a, env);
  },
};

function openapiTypescriptArgs(args: string[]): { url: string; out?: string } {
  let url: string | undefined;
  let out: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-o' || args[i] === '--output') out = args[++i];
    else if (args[i]!.startsWith('-')) throw new Error(`openapi-typescript option ${args[i]} is not one this test knows`);
    else if (url === undefined) url = args[i];
    else throw new Error(`a second source ${args[i]}`);
  }
  if (url === undefined) throw new Error('no source URL');
  return { url, ...(out !== undefined ? { out } : {}) };
}

/** A curl command's request, checked: known flags, a local URL, an operation of the v3 document, JSON that parses. */
async function curlRequest(args: string[]): Promise<{ method: string; url: string; headers: Record<string, string>; body?: string }> {
  const headers: Record<string, string> = {};
  let method: string | undefined;
  let body: string | undefined;
  let url: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = () => {
      if (i + 1 >= args.length) throw new Error(`curl ${a} needs a value`);
      return args[++i]!;
    };
    if (a === '-s' || a === '--silent') continue;
    if (a === '-H' || a === '--header') {
      const h = value();
      const c = h.indexOf(':');
      if (c < 1) throw new Error(`header '${h}' is not Name: value`);
      headers[h.slice(0, c).trim().toLowerCase()] = h.slice(c + 1).trim();
    } else if (a === '-X' || a === '--request') method = value();
    else if (a === '-d' || a === '--data' || a === '--data-binary') body = value();
    else if (a.startsWith('-')) throw new Error(`curl option ${a} is not one this test knows`);
    else if (url === undefined) url = a;
    else throw new Error(`a second URL ${a}`);
  }
  if (url === undefined) throw new Error('curl without a URL');
  method ??= body !== undefined ? 'POST' : 'GET';
  if (/^\$\w+$/.test(url)) return { method, url, headers, ...(body !== undefined ? { body } : {}) }; // a URL an earlier response gave
  const u = new URL(url);
  if (u.hostname !== '127.0.0.1') throw new Error(`${url} is not a local server (127.0.0.1)`);
  const ops = (await operations()).filter((o) => o.re.test(u.pathname));
  if (ops.length === 0) throw new Error(`no operation of the v3 document at ${u.pathname}`);
  const methods = new Set(ops.flatMap((o) => [...o.methods]));
  if (!methods.has(method)) throw new Error(`${u.pathname} has no ${method} operation (only ${[...methods].join(', ')})`);
  if (body !== undefined && /json/.test(headers['content-type'] ?? '')) {
    try {
      JSON.parse(body);
    } catch {
      throw new Error(`the body ${body} is not JSON`);
    }
  }
  return { method, url, headers, ...(body !== undefined ? { body } : {}) };
}

const tmp = mkdtempSync(join(tmpdir(), 'pmapi-readme-commands-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const allCommands = readmes().flatMap((r) => shellCommands(r, readFileSync(join(root, r), 'utf8')));
const checker = new CommandChecker(tmp);

describe('README shell commands', () => {
  it('the inventory finds the shell blocks of the READMEs', () => {
    expect(allCommands.length).toBeGreaterThan(20);
    expect(new Set(allCommands.map((c) => c.readme)).size).toBeGreaterThan(5);
  });

  it('every command line is a known form, its package, script and file exist and its program accepts its arguments', async () => {
    const problems: string[] = [];
    for (const c of allCommands) {
      const p = await checker.check(c);
      if (p) problems.push(p);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  }, 60_000);

  it('the checker refuses a misspelt flag, an unknown package or script, a file no build makes, an unknown form', async () => {
    const synthetic = [
      'pnpm --filter @pmapi/quickstart start -- --db pm.db --no-webhook-wroker',
      'pnpm --filter @pmapi/quickstrat start -- --db pm.db',
      'pnpm --filter @pmapi/example-worker serve -- --db pm.db',
      'pnpm start --prot 3001',
      'node examples/worker/dist/mian.js --db pm.db',
      'node examples/worker/dist/main.js --db postgress://x/pm',
      'node examples/two-processes/dist/main.js --db pm.db --port 3001',
      'npx pmapi migrate --db ./pmapi.db --prnt',
      'npx pmapi migrate --db postgres://app@db.internal:5432/app --schema Pm',
      'npm install @pmapi/conformance',
      'curl -s -H "Authorization: Bearer $TOKEN" http://127.0.0.1:3000/api/v3/projectz',
      "curl -s -X PATCH -d '{}' http://127.0.0.1:3000/api/v3/projects",
      'make all',
      'DEBUG=1 pnpm start',
    ];
    const readme = ['# x', '', '```sh', ...synthetic, '```', ''].join('\n');
    const commands = shellCommands('SYNTHETIC.md', readme);
    expect(commands).toHaveLength(synthetic.length);
    const problems = await Promise.all(commands.map((c) => new CommandChecker(tmp).check(c)));
    const expected = [
      /Unknown option '--no-webhook-wroker'/,
      /no workspace package named '@pmapi\/quickstrat'/,
      /@pmapi\/example-worker has no script 'serve'/,
      /Unknown option '--prot'/,
      /no file examples\/worker\/dist\/mian\.js/,
      /not a postgres:\/\//,
      /must be a postgres:\/\//,
      /unknown option '--prnt'/,
      /--schema must be a lower-case identifier/,
      /@pmapi\/conformance is private/,
      /no operation of the v3 document at \/api\/v3\/projectz/,
      /has no PATCH operation/,
      /'make' is not a command form this test knows/,
      /environment variable DEBUG/,
    ];
    problems.forEach((p, i) => expect(p, synthetic[i]).toMatch(expected[i]!));
    // And the same lines spelt right pass.
    const good = shellCommands('SYNTHETIC.md', '```sh\npnpm --filter @pmapi/quickstart start -- --db pm.db --no-webhook-worker\nnpx pmapi migrate --db ./pmapi.db --print\n```\n');
    for (const c of good) expect(await new CommandChecker(tmp).check(c)).toBeUndefined();
  }, 60_000);

  it('shell words: quotes, variables, continuations, comments, && and VAR=x', () => {
    const cmds = shellCommands('X.md', '```sh\nA=1 pnpm test && pnpm build   # two\ncurl -d \'{"k":"\'$KEY\'"}\' \\\n  "$URL/x"\n```\n', { KEY: 'k1', URL: 'http://h' });
    expect(cmds.map((c) => [c.env, c.argv])).toEqual([
      [{ A: '1' }, ['pnpm', 'test']],
      [{}, ['pnpm', 'build']],
      [{}, ['curl', '-d', '{"k":"k1"}', 'http://h/x']],
    ]);
  });
});

describe('README shell commands, run on 127.0.0.1', () => {
  let quickstart: ChildProcess | undefined;
  let baseUrl = '';
  let token = '';
  const dbDir = mkdtempSync(join(tmp, 'run-'));
  /** A SQLite --db of the README moved into dbDir (the same name, so the quickstart and the worker share it); --port → 0. */
  const local = (args: string[]) => args.map((a, i) => (args[i - 1] === '--db' && !/^postgres/.test(a) ? join(dbDir, basename(a)) : args[i - 1] === '--port' ? '0' : a));

  beforeAll(async () => {
    for (const c of allCommands) await checker.check(c);
  }, 60_000);
  afterAll(() => {
    quickstart?.kill('SIGKILL');
  });

  it("the quickstart starts with the README's arguments (a SQLite file) and answers /health; the worker starts beside it and stops on SIGTERM", async () => {
    const qs = checker.invocations.find((v) => v.program === 'examples/quickstart/dist/main.js' && v.args.includes('--db') && parseQuickstartArgs(v.args).target?.kind === 'sqlite');
    expect(qs, 'a README starts the quickstart on a SQLite file').toBeDefined();
    const started = await start<{ baseUrl: string; teams: { members: { token: string }[] }[] }>(join(root, qs!.program), [...local(qs!.args), '--port', '0', '--json'], { env: qs!.env });
    quickstart = started.child;
    const seed = started.first;
    baseUrl = seed.baseUrl;
    token = seed.teams[0]!.members[0]!.token;
    expect((await fetch(`${baseUrl}/api/v3/health`)).status).toBe(200);

    const wk = checker.invocations.find((v) => v.program === 'examples/worker/dist/main.js' && !/^postgres/.test(v.args[v.args.indexOf('--db') + 1] ?? ''));
    expect(wk, 'a README starts the worker on a SQLite file').toBeDefined();
    const worker = await start(join(root, wk!.program), local(wk!.args));
    expect(worker.first).toMatchObject({ worker: 'started' });
    // SIGTERM at once: the worker announces itself only once its signal handlers are in place.
    expect(await exitAfter(worker.child, 'SIGTERM')).toMatchObject({ code: 0, signal: null });
  }, 60_000);

  it("the root README's curl walk-through works against it (a project, an upload URL, the bytes, the file)", () => {
    expect(baseUrl).not.toBe('');
    const text = readFileSync(join(root, 'README.md'), 'utf8');
    const vars: Record<string, string> = { TOKEN: token };
    const curls = shellCommands('README.md', text).filter((c) => c.argv[0] === 'curl');
    expect(curls.length).toBeGreaterThan(2);
    for (const [k, c] of curls.entries()) {
      // Re-read with the variables known so far (the README's order), on this quickstart's port.
      const argv = shellCommands('README.md', text, vars).filter((x) => x.argv[0] === 'curl')[k]!.argv.map((a) => a.replace('http://127.0.0.1:3000', baseUrl));
      expect(argv.join(' '), `${c.line}: every variable is known`).not.toMatch(/\$[A-Z]/);
      const r = spawnSync('curl', [...argv.slice(1), '-w', '\n%{http_code}'], { encoding: 'utf8' });
      const nl = r.stdout.lastIndexOf('\n');
      const status = Number(r.stdout.slice(nl + 1));
      expect(status, `README.md:${c.line}: ${r.stdout}`).toBeGreaterThanOrEqual(200);
      expect(status, `README.md:${c.line}: ${r.stdout}`).toBeLessThan(300);
      const body = r.stdout.slice(0, nl);
      const json = body.startsWith('{') ? (JSON.parse(body) as Record<string, unknown>) : {};
      if (typeof json.uploadKey === 'string') Object.assign(vars, { KEY: json.uploadKey, URL: json.url as string });
      if (argv.includes('-d') && /\/projects$/.test(argv[argv.length - 1]!) && typeof json.id === 'string') vars.PROJECT = json.id;
      if (/\/files$/.test(argv[argv.length - 1]!)) expect(json).toMatchObject({ name: 'hello.txt', size: 5 });
    }
  }, 60_000);

  it("the README's openapi-typescript command writes the types from that quickstart's document", () => {
    expect(baseUrl).not.toBe('');
    const ot = checker.invocations.find((v) => v.program === 'openapi-typescript');
    expect(ot, 'a README runs openapi-typescript').toBeDefined();
    const pkgDir = join(root, dirname(ot!.cmd.readme));
    const manifest = join(pkgDir, 'node_modules/openapi-typescript/package.json');
    const cli = join(dirname(manifest), (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> }).bin['openapi-typescript']!);
    const out = join(tmp, 'pmapi.d.ts');
    const args = ot!.args.map((a, i) => (ot!.args[i - 1] === '-o' || ot!.args[i - 1] === '--output' ? out : a.replace('http://127.0.0.1:3000', baseUrl)));
    const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', cwd: pkgDir });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('"/projects"');
  }, 60_000);
});
