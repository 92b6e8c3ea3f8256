/*
 * Serving pmapi's own signed blob links (issue 12): `PUT ${mount}/<key>?op=put…`
 * stores exactly `size` bytes, `GET`/`HEAD ${mount}/<key>?op=get…` answers
 * them. The link is the only credential; no Authorization header is read.
 */
import type { ErrorCode } from '../errors/codes';
import type { HttpRequest, HttpResponse } from '../http/types';
import { verifyBlobLink, type BlobLink } from './links';
import type { BlobStore } from './ports';

export interface ServeBlobDeps {
  store: BlobStore;
  /** The secret the links were signed with (see `signBlobLink`). */
  secret: Uint8Array;
  nowMs: () => number;
  /** The path prefix blob links live under, e.g. `/api/v3/blobs`. */
  mount: string;
  /** Renders a problem answer (`api.problem` with the request's URL bound). */
  problem: (code: ErrorCode, detail: string, extras?: Record<string, unknown>) => HttpResponse;
}

const ALLOW = 'GET, HEAD, PUT';
const OCTET = 'application/octet-stream';

/**
 * Content types by file-name extension. Anything else (HTML above all) is
 * `application/octet-stream`, which browsers do not render. SVG is absent on
 * purpose: it can carry script, so it is served as bytes, as an attachment.
 */
const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  zip: 'application/zip',
};

function extensionOf(fileName: string | undefined): string {
  const m = fileName === undefined ? null : /\.([A-Za-z0-9]{1,10})$/.exec(fileName);
  return m ? m[1]!.toLowerCase() : '';
}

/** RFC 8187 `value-chars`: everything but attr-char percent-encoded (encodeURIComponent leaves `'()*!` as is). */
function encodeRfc8187(s: string): string {
  return encodeURIComponent(s).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * How bytes may be presented: as asked, or only ever saved (`attachment`)
 * when the name's type is not one known to be safe to show (SVG, HTML,
 * anything unknown), whichever store serves them.
 */
/** The Content-Type pmapi serves a file name's bytes with: a known safe type, else `application/octet-stream`. */
export function contentTypeOf(fileName: string | undefined): string {
  return CONTENT_TYPES[extensionOf(fileName)] ?? OCTET;
}

export function safeDisposition(fileName: string | undefined, asked: 'inline' | 'attachment' | undefined): 'inline' | 'attachment' {
  return CONTENT_TYPES[extensionOf(fileName)] ? asked ?? 'attachment' : 'attachment';
}

/** `inline|attachment; filename="ascii"; filename*=UTF-8''utf8` (RFC 6266), or the bare disposition without a name. */
function contentDisposition(disposition: 'inline' | 'attachment', fileName: string | undefined): string {
  if (fileName === undefined || fileName === '') return disposition;
  // The quoted fallback: printable ASCII only, no quote, backslash, path separators or percent sign.
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\/%]/g, '_');
  let encoded: string;
  try {
    encoded = encodeRfc8187(fileName);
  } catch {
    // A lone surrogate (links never carry one, but a caller might): the ASCII fallback alone.
    return `${disposition}; filename="${ascii}"`;
  }
  return `${disposition}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

function bytesOf(body: HttpRequest['body']): Uint8Array {
  if (body === undefined) return new Uint8Array(0);
  if (typeof body === 'string') return new TextEncoder().encode(body);
  return body;
}

/**
 * Answer a request to a signed blob link. Bad, tampered or misused links
 * (a `get` link PUT to, a `put` link fetched) are 403 `link_invalid`, links
 * past their time 403 `link_expired`; methods other than GET, HEAD and PUT
 * 405 `method_not_allowed`.
 */
export async function serveBlobRequest(req: HttpRequest, deps: ServeBlobDeps): Promise<HttpResponse> {
  const out = await serve(req, deps);
  // HEAD: the headers GET would send, never a body.
  if (req.method.toUpperCase() === 'HEAD' && out.body !== undefined) {
    const { body: _body, ...rest } = out;
    return rest;
  }
  return out;
}

async function serve(req: HttpRequest, deps: ServeBlobDeps): Promise<HttpResponse> {
  const method = req.method.toUpperCase();
  const mount = deps.mount.replace(/\/+$/, '');
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (!path.startsWith(`${mount}/`)) return deps.problem('route_not_found', `No route ${path}`);
  if (method !== 'GET' && method !== 'HEAD' && method !== 'PUT') {
    const p = deps.problem('method_not_allowed', `${method} is not allowed here; use ${ALLOW}`);
    return { ...p, headers: { ...p.headers, allow: ALLOW } };
  }

  const nowSeconds = Math.floor(deps.nowMs() / 1000);
  const check = verifyBlobLink(deps.secret, { key: path.slice(mount.length + 1), query: new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1)) }, nowSeconds);
  if (!check.ok) {
    return check.reason === 'expired'
      ? deps.problem('link_expired', 'The link has expired; ask for a new one')
      : deps.problem('link_invalid', 'The link is not valid');
  }
  const link = check.link;
  if ((method === 'PUT') !== (link.op === 'put')) return deps.problem('link_invalid', `This link does not allow ${method}`);

  if (method === 'PUT') return upload(req, link, deps);
  return download(method, link, nowSeconds, deps);
}

async function upload(req: HttpRequest, link: BlobLink, deps: ServeBlobDeps): Promise<HttpResponse> {
  const bytes = bytesOf(req.body);
  const expected = link.size ?? 0;
  if (bytes.byteLength !== expected) {
    const message = `Expected exactly ${expected} bytes, got ${bytes.byteLength}`;
    return deps.problem('validation_failed', `body: ${message}`, { errors: [{ field: 'body', code: 'size_mismatch', message }] });
  }
  await deps.store.put(link.key, bytes);
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
    body: JSON.stringify({ uploaded: true, size: bytes.byteLength }),
  };
}

async function download(method: string, link: BlobLink, nowSeconds: number, deps: ServeBlobDeps): Promise<HttpResponse> {
  // HEAD asks for the size only, not the bytes.
  const bytes = method === 'HEAD' ? undefined : await deps.store.get(link.key);
  const present = method === 'HEAD' ? (await deps.store.size(link.key)) !== undefined : bytes !== undefined;
  if (!present) return deps.problem('resource_not_found', 'No file behind this link');

  const type = CONTENT_TYPES[extensionOf(link.fileName)];
  const headers: Record<string, string> = {
    'content-type': type ?? OCTET,
    'content-disposition': contentDisposition(safeDisposition(link.fileName, link.disposition), link.fileName),
    'x-content-type-options': 'nosniff',
    'cache-control': `private, max-age=${Math.max(0, link.expiresAt - nowSeconds)}`,
  };
  return bytes === undefined ? { status: 200, headers } : { status: 200, headers, body: bytes };
}
