import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { readmes } from './readmes';

// Issue 16 "Done when … every README snippet is exercised by a test". Every ```ts / ```js block of
// README.md, packages/*/README.md and examples/*/README.md (found afresh on each run, so new READMEs
// and new blocks are covered without registering them) is checked one of two ways:
//
// 1. A block right after `<!-- snippet: <file>#<region> -->` must equal the region between
//    `// #region <region>` and `// #endregion <region>` of that file, which is a test file or code a test
//    runs (e.g. packages/http-node/test/fastify.test.ts#fastify). The snippet is then run for real.
// 2. Any other block is typechecked against the real sources, as its own module in the folder of its
//    README (so `express`, `hono`, `pino` resolve as they would there): renamed exports, options that no
//    longer exist and wrong argument types fail here. A snippet's free names are supplied: an export of a
//    pmapi package (`createPmapi`, `toNodeHandler`: a fragment that leaves out its imports) is imported from
//    it; the objects a fragment assumes (`api`, `store`, `app`, …) are declared from CONTEXT below; any
//    other free name fails the test. Consecutive alternatives (`const store = …; // or` a second
//    `const store = …`) are a README convention: each line is still typechecked, only the redeclaration
//    itself is let through. Snippets get the repo's strict settings except noUncheckedIndexedAccess
//    (not part of `strict`, so not what a reader's project has).

/** Where a fragment's unimported names come from (first match wins). */
const MODULES = ['@pmapi/core', '@pmapi/adapter-sqlite', '@pmapi/adapter-postgres', '@pmapi/http-node', '@pmapi/webhooks', '@pmapi/blob-s3', '@pmapi/thumbnails', '@pmapi/testing', 'vitest'];

const root = fileURLToPath(new URL('..', import.meta.url));

/** The names README fragments use without declaring them: a type, or (starting with `import`) a declaration. */
const CONTEXT: Record<string, string> = {
  api: "import('@pmapi/core').Pmapi",
  store: "import('@pmapi/core/sql').SqlStore",
  token: 'string',
  connectionString: 'string',
  pool: "import('pg').Pool",
  app: "import('express').Express",
  expressApp: "import('express').Express",
  req: "import('node:http').IncomingMessage",
  res: "import('node:http').ServerResponse",
  rawBody: 'Buffer',
  secret: 'string',
  lineSchema: "import('zod').ZodString",
  myPgPool: "import('pg').Pool",
  db: 'string',
  // examples/custom-sign-in: the host's template, the OAuth client libraries and the browser's part.
  express: "import type express from 'express';",
  myTemplate: '(view: unknown, host?: unknown) => Promise<string>',
  client: "import * as client from 'openid-client';",
  oauth: "import * as oauth from 'oauth4webapi';",
  issuer: 'string',
  clientId: 'string',
  redirectUri: 'string',
  signInAndConsent: '(authorizationUrl: URL, o?: { workspace?: string }) => Promise<URL>',
  projectId: 'string',
};

/** Per README: names whose meaning differs there, and a line of context (type augmentations the example's code makes). */
const README_CONTEXT: Record<string, { names?: Record<string, string>; preamble?: string }> = {
  'examples/hono/README.md': { names: { app: "import('hono').Hono<{ Bindings: import('@hono/node-server').HttpBindings }>" } },
  'examples/custom-sign-in/README.md': { preamble: "import './src/app';" },
};

/** Third-party modules snippets import, resolved where the workspace has them installed. */
const THIRD_PARTY: Record<string, string> = {
  zod: 'packages/core/node_modules/zod',
  express: 'examples/express/node_modules/@types/express',
  hono: 'examples/hono/node_modules/hono',
  '@hono/node-server': 'examples/hono/node_modules/@hono/node-server',
  'openid-client': 'examples/custom-sign-in/node_modules/openid-client',
  oauth4webapi: 'examples/custom-sign-in/node_modules/oauth4webapi',
};
/** Modules no workspace package installs: the shape snippets use. */
const AMBIENT = "declare module 'pino' { export default function pino(): { info(obj: object, msg: string): void }; }\n";

interface Snippet {
  readme: string;
  line: number;
  lang: string;
  code: string;
  /** `file#region` from a `<!-- snippet: … -->` marker right before the block. */
  region?: string;
}

function snippets(): Snippet[] {
  const out: Snippet[] = [];
  for (const readme of readmes()) {
    const lines = readFileSync(join(root, readme), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^(\s*)```(ts|js|typescript|javascript|mjs|cjs)\b/.exec(lines[i]!);
      if (!open) continue;
      const indent = open[1]!.length;
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) body.push(lines[j]!.slice(Math.min(indent, lines[j]!.length - lines[j]!.trimStart().length)));
      let k = i - 1;
      while (k >= 0 && lines[k]!.trim() === '') k--;
      const marker = k >= 0 ? /^\s*<!--\s*snippet:\s*(\S+)\s*-->\s*$/.exec(lines[k]!) : null;
      out.push({ readme, line: i + 1, lang: open[2]!, code: body.join('\n'), ...(marker ? { region: marker[1]! } : {}) });
      i = j;
    }
  }
  return out;
}

/** The text between `// #region name` and `// #endregion name`, its common indentation removed. */
function region(file: string, name: string): string | undefined {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const start = lines.findIndex((l) => l.trim() === `// #region ${name}`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === `// #endregion ${name}`);
  if (start < 0 || end < 0) return undefined;
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
  return body.map((l) => l.slice(indent)).join('\n');
}

const all = snippets();
const typed = all.filter((s) => !s.region);

describe('README snippets', () => {
  it('there are snippets to check (the inventory found the READMEs)', () => {
    expect(all.length).toBeGreaterThan(10);
  });

  it('a snippet marked `<!-- snippet: file#region -->` equals that region of code a test runs', () => {
    const bad: string[] = [];
    for (const s of all.filter((x) => x.region)) {
      const [file, name] = s.region!.split('#') as [string, string];
      const where = `${s.readme}:${s.line} (${s.region})`;
      if (!existsSync(join(root, file))) bad.push(`${where}: no file ${file}`);
      else if (!/\/test\/|\/src\//.test(file)) bad.push(`${where}: ${file} is neither a test nor code under src/`);
      else {
        const text = region(file, name);
        if (text === undefined) bad.push(`${where}: no region '${name}' in ${file}`);
        else if (text.trimEnd() !== s.code.trimEnd()) bad.push(`${where}: the README block differs from the region:\n--- README\n${s.code}\n--- ${file}\n${text}`);
      }
    }
    expect(bad, bad.join('\n\n')).toEqual([]);
  });

  it('every other ts/js snippet typechecks against the current sources', () => {
    const config = ts.parseJsonConfigFileContent(JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')), ts.sys, root);
    const paths = { ...config.options.paths, ...Object.fromEntries(Object.entries(THIRD_PARTY).map(([m, dir]) => [m, [dir]])) };
    const options: ts.CompilerOptions = { ...config.options, paths, noEmit: true, noUnusedLocals: false, noUncheckedIndexedAccess: false, allowJs: true, checkJs: true, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'] };
    const ambientFile = join(root, '__readme_ambient.d.ts');
    // Each snippet is a module of its own beside its README (its imports resolve from there).
    const files = new Map<string, { s: Snippet; text: string }>();
    const fileOf = (s: Snippet, i: number) => join(root, dirname(s.readme), `__readme_snippet_${i}.${s.lang.startsWith('j') || s.lang === 'mjs' || s.lang === 'cjs' ? 'mjs' : 'ts'}`);
    const build = (declare: Map<string, Set<string>>, old?: ts.Program) => {
      files.clear();
      typed.forEach((s, i) => {
        const file = fileOf(s, i);
        const names = [...(declare.get(file) ?? [])];
        const local = README_CONTEXT[s.readme];
        const decls = (local?.preamble ? `${local.preamble} ` : '') + names.map((n) => {
          const c = local?.names?.[n] ?? CONTEXT[n];
          if (c === undefined) return `import { ${n} } from '${exporter.get(n)}';`;
          return c.startsWith('import ') ? c : `declare const ${n}: ${c};`;
        }).join(' ');
        // One line of context first (line numbers in messages are then the snippet's own, plus one).
        files.set(file, { s, text: `${decls} export {};\n${s.code}\n` });
      });
      const host = ts.createCompilerHost(options);
      const readFile = host.readFile.bind(host);
      const fileExists = host.fileExists.bind(host);
      const virtual = (f: string) => (f === exportsFile ? exportsText : f === ambientFile ? AMBIENT : files.get(f)?.text);
      host.readFile = (f) => virtual(f) ?? readFile(f);
      host.fileExists = (f) => virtual(f) !== undefined || fileExists(f);
      const getSourceFile = host.getSourceFile.bind(host);
      host.getSourceFile = (f, v, onError, create) => {
        const own = virtual(f);
        return own !== undefined ? ts.createSourceFile(f, own, v, true) : getSourceFile(f, v, onError, create);
      };
      return ts.createProgram({ rootNames: [...files.keys(), exportsFile, ambientFile], options, host, ...(old ? { oldProgram: old } : {}) });
    };
    // The exports of each pmapi package, read from a module that imports them all.
    const exportsFile = join(root, '__readme_exports.ts');
    const exporter = new Map<string, string>();
    const exportsText = MODULES.map((m, i) => `import * as m${i} from '${m}';`).join('\n') + '\nexport {};\n';
    // First pass: which free names each snippet uses; second pass: with those declared from CONTEXT.
    const first = build(new Map());
    const checker = first.getTypeChecker();
    for (const stmt of first.getSourceFile(exportsFile)!.statements) {
      if (!ts.isImportDeclaration(stmt)) continue;
      const mod = checker.getSymbolAtLocation(stmt.moduleSpecifier);
      const name = (stmt.moduleSpecifier as ts.StringLiteral).text;
      for (const e of mod ? checker.getExportsOfModule(mod) : []) if (!exporter.has(e.name)) exporter.set(e.name, name);
    }
    const declare = new Map<string, Set<string>>();
    const unknown: string[] = [];
    for (const [file, { s }] of files) {
      for (const d of first.getSemanticDiagnostics(first.getSourceFile(file))) {
        // Cannot find name / namespace 'x' (did you mean …; a test runner's name), no value for shorthand property 'x'.
        if (![2304, 2552, 2503, 2580, 2581, 2582, 2583, 2591, 2592, 2593, 18004].includes(d.code)) continue;
        const name = /'([^']+)'/.exec(ts.flattenDiagnosticMessageText(d.messageText, '\n'))?.[1];
        if (!name) continue;
        if (README_CONTEXT[s.readme]?.names?.[name] || CONTEXT[name] || exporter.has(name)) (declare.get(file) ?? declare.set(file, new Set()).get(file)!).add(name);
        else unknown.push(`${s.readme}:${s.line}: '${name}' is neither declared by the snippet nor in CONTEXT`);
      }
    }
    expect(unknown, unknown.join('\n')).toEqual([]);
    const second = build(declare, first);
    const errors: string[] = [];
    for (const [file, { s }] of files) {
      const sf = second.getSourceFile(file)!;
      for (const d of [...second.getSyntacticDiagnostics(sf), ...second.getSemanticDiagnostics(sf)]) {
        if (d.code === 2451) continue; // Cannot redeclare block-scoped variable: consecutive alternatives
        const at = d.start !== undefined ? sf.getLineAndCharacterOfPosition(d.start).line : 0;
        errors.push(`${s.readme}:${s.line + at} (${relative(root, file)}): ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      }
    }
    expect(errors, errors.join('\n')).toEqual([]);
  }, 120_000);
});
