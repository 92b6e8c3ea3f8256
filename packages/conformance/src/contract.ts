/*
 * Issue 17 "The contract": every v3 reply the conformance suite receives is
 * checked against the OpenAPI document the API serves. A reply whose status
 * the matched operation does not describe, or whose body does not validate
 * against the described schema (ajv, JSON Schema 2020-12, with formats), fails
 * the request that got it. Validators are compiled once per document (and
 * per (operation, status) on first use), shared by every harness whose API
 * serves the same document.
 *
 * Rules (docs/not-shown.md "Contract and harness (issue 17)"):
 * - the operation is the document's path template matching the request path
 *   under the server URL (literal segments win over `{id}`) with its method;
 * - an explicitly listed status wins; `default` (a problem body) covers
 *   other error statuses (>= 400) only, never a success;
 * - a request matching no operation must be answered by a problem (>= 400);
 * - with `fields[...]` in the query, records are checked with only `id`
 *   required (the selection drops the other keys), everything else as is;
 * - the JSON request body of a request the server accepted (2xx) must match
 *   the operation's documented request body (when the caller passes it).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { writeFileSync } from 'node:fs';

type Doc = Record<string, any>;
export interface CheckedReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface Contract {
  /**
   * Throws a clear Error when the reply is not what the document describes for this request. `url` is path and query as sent (base path included).
   * `requestBody` (the parsed JSON sent, when one was): a 2xx reply means the server accepted it, so it must match the operation's request body schema.
   */
  checkReply(method: string, url: string, reply: CheckedReply, requestBody?: unknown): void;
}

const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv2020) => void;
const DOC_ID = 'pmapi:openapi';
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

const cache = new Map<string, Contract>();

/** PMAPI_CONTRACT_TIMING=<file>: keep in that file how many replies this process checked and the time it took (compilation included). */
const timingFile = process.env.PMAPI_CONTRACT_TIMING;
const timing = timingFile ? { checks: 0, unmatched: 0, ms: 0, compileMs: 0 } : undefined;

/** The contract of a served document; the same document (byte for byte) shares one compiled contract. */
export function contractOf(doc: Doc): Contract {
  const key = JSON.stringify(doc);
  let c = cache.get(key);
  if (!c) {
    c = createContract(JSON.parse(key));
    cache.set(key, c);
  }
  return c;
}

/** The document with only `id` required in records (a `fields[...]` selection). */
function partialDoc(doc: Doc): Doc {
  const out = structuredClone(doc);
  for (const s of Object.values<any>(out.components?.schemas ?? {})) {
    if (Array.isArray(s.required) && s.required.includes('id') && s.properties?.id) s.required = ['id'];
  }
  return out;
}

function makeAjv(doc: Doc): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: DOC_ID, components: doc.components, paths: doc.paths }, DOC_ID);
  return ajv;
}

const pointer = (parts: readonly string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function createContract(doc: Doc): Contract {
  const base = String(doc.servers?.[0]?.url ?? '').replace(/\/$/, '');
  type Template = { path: string; segs: string[]; literal: number };
  const templates: Template[] = Object.keys(doc.paths).map((p) => {
    const segs = p.split('/').filter(Boolean);
    return { path: p, segs, literal: segs.filter((s) => !s.startsWith('{')).length };
  });
  const ajvs: { full?: Ajv2020; partial?: Ajv2020 } = {};
  const validators = new Map<string, ValidateFunction>();
  const validator = (schemaPointer: string, partial: boolean): ValidateFunction => {
    const k = `${partial ? 'p' : 'f'}${schemaPointer}`;
    let v = validators.get(k);
    if (!v) {
      const ajv = partial ? (ajvs.partial ??= makeAjv(partialDoc(doc))) : (ajvs.full ??= makeAjv(doc));
      const t0 = timing ? performance.now() : 0;
      v = ajv.compile({ $ref: `${DOC_ID}#/${schemaPointer}` });
      if (timing) timing.compileMs += performance.now() - t0;
      validators.set(k, v);
    }
    return v;
  };

  function match(method: string, segs: string[]): { template: Template; op: any } | undefined {
    let best: { template: Template; op: any } | undefined;
    for (const t of templates) {
      if (t.segs.length !== segs.length) continue;
      // HEAD is GET without the body (RFC 9110): a path's GET operation describes it.
      const op = doc.paths[t.path][method] ?? (method === 'head' ? doc.paths[t.path].get : undefined);
      if (!op) continue;
      if (!t.segs.every((s, i) => s.startsWith('{') || s === segs[i])) continue;
      if (!best || t.literal > best.template.literal) best = { template: t, op };
    }
    return best;
  }

  /**
   * The JSON pointer of the application/json schema of a response or request body at `at` (following one `$ref`
   * into components.responses or components.requestBodies); undefined when it describes no JSON body.
   */
  function jsonSchemaAt(at: string[], node: any): string | undefined {
    let where = at;
    if (typeof node?.$ref === 'string') {
      where = node.$ref.replace(/^#\//, '').split('/').map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
      node = where.reduce((o: any, k) => o?.[k], doc);
    }
    return node?.content?.['application/json'] ? pointer([...where, 'content', 'application/json', 'schema']) : undefined;
  }

  /** The first few ajv errors of a failed validation, one per line. */
  const errorLines = (v: ValidateFunction) =>
    (v.errors ?? []).slice(0, 6).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`).join('\n    ');

  const fail = (method: string, url: string, reply: CheckedReply, why: string): never => {
    const shown = JSON.stringify(reply.body);
    throw new Error(`contract (OpenAPI): ${method} ${url} → ${reply.status}: ${why}\n  body: ${shown === undefined ? '(none)' : shown.length > 600 ? `${shown.slice(0, 600)}…` : shown}`);
  };

  function validate(method: string, url: string, reply: CheckedReply, schemaAt: string, partial: boolean, what: string): void {
    const v = validator(schemaAt, partial);
    if (v(reply.body)) return;
    fail(method, url, reply, `body does not match ${what}:\n    ${errorLines(v)}`);
  }

  function checkReply(method: string, url: string, reply: CheckedReply, requestBody?: unknown): void {
    if (!timing) return check(method, url, reply, requestBody);
    const t0 = performance.now();
    try {
      check(method, url, reply, requestBody);
    } finally {
      timing.checks++;
      timing.ms += performance.now() - t0;
      writeFileSync(timingFile!, JSON.stringify({ ...timing, ms: Math.round(timing.ms), compileMs: Math.round(timing.compileMs) }));
    }
  }

  return { checkReply };

  /** The accepted request body against the operation's request body schema. */
  function checkRequest(method: string, url: string, reply: CheckedReply, at: string[], op: any, body: unknown): void {
    const schemaAt = jsonSchemaAt([...at, 'requestBody'], op.requestBody);
    if (!schemaAt) return;
    const v = validator(schemaAt, false);
    if (v(body)) return;
    fail(method, url, reply, `the server accepted a request body the document's request body refuses:\n    ${errorLines(v)}\n  request body: ${JSON.stringify(body)?.slice(0, 600)}`);
  }

  function check(method: string, url: string, reply: CheckedReply, requestBody?: unknown): void {
    const m = method.toLowerCase();
    const q = url.indexOf('?');
    const full = q === -1 ? url : url.slice(0, q);
    if (full !== base && !full.startsWith(`${base}/`)) return;
    const segs = full.slice(base.length).split('/').filter(Boolean).map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
    const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const partial = [...query.keys()].some((k) => k.startsWith('fields['));
    const found = METHODS.includes(m) ? match(m, segs) : undefined;
    if (!found) {
      if (timing) timing.unmatched++;
      if (reply.status < 400) fail(method, url, reply, 'no operation of the document matches this request, yet it succeeded');
      validate(method, url, reply, pointer(['components', 'schemas', 'Problem']), false, 'Problem (request matching no operation)');
      problemAgrees(method, url, reply);
      return;
    }
    const { template, op } = found;
    if (requestBody !== undefined && reply.status >= 200 && reply.status < 300) checkRequest(method, url, reply, ['paths', template.path, m], op, requestBody);
    // The listed status, else its range (2XX), else `default` for an error.
    const status = String(reply.status);
    const key = [status, `${status[0]}XX`, ...(reply.status >= 400 ? ['default'] : [])].find((k) => op.responses?.[k]);
    if (!key) return fail(method, url, reply, `status ${reply.status} is not described for ${m.toUpperCase()} ${template.path} (described: ${Object.keys(op.responses ?? {}).join(', ')})`);
    const schemaAt = jsonSchemaAt(['paths', template.path, m, 'responses', key], op.responses[key]);
    if (!schemaAt) {
      if (reply.body !== undefined && m !== 'head') fail(method, url, reply, `${m.toUpperCase()} ${template.path} answers ${reply.status} without a body, yet one came`);
      return;
    }
    if (m === 'head' || reply.status === 304) return;
    if (reply.body === undefined) fail(method, url, reply, `a body is described for ${reply.status}, none came`);
    const ct = reply.headers['content-type'] ?? '';
    if (!/^application\/(?:[a-z0-9.+-]+\+)?json\b/i.test(ct)) fail(method, url, reply, `content-type ${ct || '(none)'} is not application/json`);
    validate(method, url, reply, schemaAt, partial, `${m.toUpperCase()} ${template.path} ${reply.status}`);
    if (reply.status >= 400) problemAgrees(method, url, reply);
  }

  /** What a schema cannot say of a problem: its status is the HTTP status, its type its code, and a 429's retryAfter the Retry-After header. */
  function problemAgrees(method: string, url: string, reply: CheckedReply): void {
    const b = reply.body as Record<string, unknown> | undefined;
    if (!b || typeof b !== 'object') return;
    if (b.status !== reply.status) fail(method, url, reply, `problem status ${String(b.status)} differs from the HTTP status`);
    if (b.type !== b.code) fail(method, url, reply, `problem type ${String(b.type)} differs from its code ${String(b.code)}`);
    if (reply.status === 429 && String(b.retryAfter) !== reply.headers['retry-after']) {
      fail(method, url, reply, `429 retryAfter ${String(b.retryAfter)} differs from Retry-After ${String(reply.headers['retry-after'])}`);
    }
  }
}
