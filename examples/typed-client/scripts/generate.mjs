// Writes src/pmapi.d.ts from the OpenAPI document the quickstart serves, with openapi-typescript:
// exactly what a user does against a running server,
//   npx openapi-typescript http://127.0.0.1:3000/api/v3/openapi.json -o src/pmapi.d.ts
//
// Usage: node scripts/generate.mjs [--url URL] [--out FILE]
//   --url  the document to read (default: start the built quickstart on a free 127.0.0.1 port, read its
//          /api/v3/openapi.json, stop it)
//   --out  where to write (default: src/pmapi.d.ts); the drift test writes to a temporary file and compares
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
/** The command line (unknown options throw); exported so test/readme-commands.test.ts checks the README's commands. */
export const parseGenerateArgs = (args) => parseArgs({ args, options: { url: { type: 'string' }, out: { type: 'string', default: here('../src/pmapi.d.ts') } } }).values;

/** Start the built quickstart with --port 0 --json; resolves with its base URL and a stop function. */
async function startQuickstart() {
  const main = here('../../quickstart/dist/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run pnpm install (it builds the packages) or pnpm --filter @pmapi/quickstart build`);
  const child = spawn(process.execPath, [main, '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const baseUrl = await new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c.toString('utf8');
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve(JSON.parse(out.slice(0, nl)).baseUrl);
    });
    child.on('exit', (code) => reject(new Error(`quickstart exited with ${code}`)));
  });
  return { baseUrl, stop: () => child.kill('SIGTERM') };
}

const readJson = (url) => JSON.parse(readFileSync(new URL(url), 'utf8'));

/** Run the openapi-typescript CLI (the package's own bin, as npx would) on url, writing out. */
function openapiTypescript(url, out) {
  // Its package.json names the bin (the exports map rewrites *.js to *.mjs, so resolve the manifest).
  const manifest = import.meta.resolve('openapi-typescript/package.json');
  const cli = fileURLToPath(new URL(readJson(manifest).bin['openapi-typescript'], manifest));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, url, '-o', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (c) => (log += c));
    child.stderr.on('data', (c) => (log += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`openapi-typescript exited with ${code}:\n${log}`))));
  });
}

// Run when executed (node scripts/generate.mjs), not when imported for parseGenerateArgs.
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  const values = parseGenerateArgs(process.argv.slice(2));
  let server;
  try {
    let url = values.url;
    if (!url) {
      server = await startQuickstart();
      url = `${server.baseUrl}/api/v3/openapi.json`;
    }
    await openapiTypescript(url, values.out);
    console.log(`wrote ${values.out} from ${url}`);
  } finally {
    server?.stop();
  }
}
