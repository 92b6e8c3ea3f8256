import { createHash } from 'node:crypto';
import type { HttpRequest, HttpResponse } from '../http/types';
import type { ErrorCode } from '../errors/codes';
import { noteRequest } from '../http/observe';
import { openApiDocument, type OpenApiDocument, type OpenApiOptions } from './document';

export interface OpenApiServer {
  /** `{basePath}/openapi.json`. */
  readonly path: string;
  /** The document, built on first use and kept. */
  document(): OpenApiDocument;
  /** GET|HEAD: 200 with an ETag (304 for a matching If-None-Match); no authentication. */
  serve(req: HttpRequest): HttpResponse;
}

/**
 * Serving of the OpenAPI document at `GET {basePath}/openapi.json` (issue
 * 17): built once per API on the first request (or `api.openapi()`), then
 * the same bytes and a strong ETag (their SHA-256) every time.
 */
export function openApiServer(o: OpenApiOptions & {
  problem: (code: ErrorCode, detail: string, req: HttpRequest, extras?: Record<string, unknown>) => HttpResponse;
}): OpenApiServer {
  const path = `${(o.basePath ?? '/api/v3').replace(/\/$/, '')}/openapi.json`;
  let doc: OpenApiDocument | undefined;
  let bytes: { body: string; etag: string } | undefined;
  const document = () => (doc ??= openApiDocument(o));
  return {
    path,
    document,
    serve(req) {
      noteRequest(req, { route: path });
      const method = req.method.toUpperCase();
      if (method !== 'GET' && method !== 'HEAD') {
        const r = o.problem('method_not_allowed', `${method} is not allowed here`, req, { allowed: ['GET', 'HEAD'] });
        return { ...r, headers: { ...r.headers, allow: 'GET, HEAD' } };
      }
      if (!bytes) {
        const body = JSON.stringify(document());
        bytes = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"` };
      }
      const headers = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300', etag: bytes.etag };
      const inm = req.headers['if-none-match'];
      const given = (Array.isArray(inm) ? inm.join(',') : inm ?? '').split(',').map((s) => s.trim().replace(/^W\//, ''));
      if (given.includes(bytes.etag) || given.includes('*')) return { status: 304, headers };
      return { status: 200, headers, ...(method === 'HEAD' ? {} : { body: bytes.body }) };
    },
  };
}
