/*
 * pmapi's own upload and download links (issue 12), for a BlobStore without
 * presign methods: `${base}/${key}?op=…&exp=…[&size=…][&name=…&disp=…]&sig=…`,
 * where `sig` is an HMAC-SHA256 over every field. The link is the whole
 * credential: whoever holds it may PUT (exactly `size` bytes) or GET the one
 * key until `exp`, and nothing else.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BLOB_KEY_PATTERN } from './local';
import type { Disposition } from './ports';

/** What a signed link allows. */
export interface BlobLink {
  /** `put`: upload the key's bytes; `get`: download them. */
  op: 'put' | 'get';
  /** The blob key (see `BLOB_KEY_PATTERN`). */
  key: string;
  /** When the link stops working, in unix seconds (it works while now < expiresAt). */
  expiresAt: number;
  /** put: the exact byte count the upload must have (required for `put`). */
  size?: number;
  /** get: the file name the download is offered under. */
  fileName?: string;
  /** get: shown in the browser (`inline`) or saved (`attachment`, the default when absent). */
  disposition?: Disposition;
}

export type BlobLinkCheck = { ok: true; link: BlobLink } | { ok: false; reason: 'bad_signature' | 'expired' | 'malformed' };

/** Longest file name a link carries (in UTF-16 code units). */
const MAX_NAME = 1024;
const MIN_SECRET_BYTES = 16;
const OPS = new Set(['put', 'get']);
const DISPOSITIONS = new Set(['inline', 'attachment']);
/** Unsigned decimal integers only: no sign, exponent, fraction, hex or whitespace; at most 15 digits (a safe integer). */
const INTEGER = /^(0|[1-9][0-9]{0,14})$/;
const SIG = /^[0-9a-fA-F]{64}$/;
/** Unpaired UTF-16 surrogates: a query string cannot carry them (they turn into U+FFFD), so they are replaced before signing. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function checkSecret(secret: Uint8Array): void {
  if (!(secret instanceof Uint8Array) || secret.byteLength < MIN_SECRET_BYTES) {
    throw new Error(`The blob link secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
}

/**
 * The signed text: every field in a fixed order, JSON-encoded so no two
 * different links share it (a version tag keeps it apart from any other use
 * of the same secret).
 */
function mac(secret: Uint8Array, link: BlobLink): Buffer {
  const canonical = JSON.stringify(['pmapi-blob-link-v1', link.op, link.key, link.expiresAt, link.size ?? null, link.fileName ?? null, link.disposition ?? null]);
  return createHmac('sha256', secret).update(canonical, 'utf8').digest();
}

/**
 * A link to `base/key` allowing `link.op` until `link.expiresAt`.
 * `base` is where the blob endpoint is mounted, absolute or not
 * (`https://pm.example.com/api/v3/blobs`, `/api/v3/blobs`). Throws on a key
 * outside `BLOB_KEY_PATTERN`, a `put` without `size`, or a non-integer time
 * or size.
 */
export function signBlobLink(secret: Uint8Array, base: string, link: BlobLink): string {
  checkSecret(secret);
  if (!OPS.has(link.op)) throw new Error(`Invalid blob link op ${JSON.stringify(link.op)}`);
  if (!BLOB_KEY_PATTERN.test(link.key)) throw new Error(`Invalid blob key ${JSON.stringify(link.key)}`);
  if (!INTEGER.test(String(link.expiresAt))) throw new Error('Blob link expiresAt must be a non-negative integer (unix seconds)');
  if (link.size !== undefined && !INTEGER.test(String(link.size))) throw new Error('Blob link size must be a non-negative integer');
  if (link.op === 'put' && link.size === undefined) throw new Error('An upload link needs the exact size');
  if (link.disposition !== undefined && !DISPOSITIONS.has(link.disposition)) throw new Error(`Invalid disposition ${JSON.stringify(link.disposition)}`);
  let fileName = link.fileName;
  if (fileName !== undefined) {
    fileName = fileName.replace(LONE_SURROGATE, '\uFFFD');
    if (fileName.length === 0 || fileName.length > MAX_NAME) throw new Error(`A blob link file name must be 1-${MAX_NAME} characters`);
  }
  const signed: BlobLink = { op: link.op, key: link.key, expiresAt: link.expiresAt };
  if (link.size !== undefined) signed.size = link.size;
  if (fileName !== undefined) signed.fileName = fileName;
  if (link.disposition !== undefined) signed.disposition = link.disposition;

  const q = new URLSearchParams();
  q.set('op', signed.op);
  q.set('exp', String(signed.expiresAt));
  if (signed.size !== undefined) q.set('size', String(signed.size));
  if (signed.fileName !== undefined) q.set('name', signed.fileName);
  if (signed.disposition !== undefined) q.set('disp', signed.disposition);
  q.set('sig', mac(secret, signed).toString('hex'));
  return `${base.replace(/\/+$/, '')}/${signed.key}?${q.toString()}`;
}

/**
 * Check a link's key (from the path) and query against the secret, at
 * `nowSeconds`. `malformed`: a field is missing, repeated or not of its form;
 * `bad_signature`: any field differs from what was signed; `expired`:
 * `nowSeconds >= exp` (checked only once the signature holds). Unknown query
 * parameters are ignored (they are not signed and change nothing).
 */
export function verifyBlobLink(secret: Uint8Array, pathAndQuery: { key: string; query: URLSearchParams }, nowSeconds: number): BlobLinkCheck {
  checkSecret(secret);
  const { key, query } = pathAndQuery;
  const one = (name: string): string | undefined | null => {
    const all = query.getAll(name);
    return all.length > 1 ? null : all[0];
  };
  const op = one('op');
  const exp = one('exp');
  const size = one('size');
  const name = one('name');
  const disp = one('disp');
  const sig = one('sig');
  const malformed = { ok: false, reason: 'malformed' } as const;
  if (typeof key !== 'string' || !BLOB_KEY_PATTERN.test(key)) return malformed;
  if (op === null || op === undefined || !OPS.has(op)) return malformed;
  if (exp === null || exp === undefined || !INTEGER.test(exp)) return malformed;
  if (size === null || (size !== undefined && !INTEGER.test(size))) return malformed;
  if (op === 'put' && size === undefined) return malformed;
  if (name === null || (name !== undefined && (name.length === 0 || name.length > MAX_NAME))) return malformed;
  if (disp === null || (disp !== undefined && !DISPOSITIONS.has(disp))) return malformed;
  if (sig === null || sig === undefined || !SIG.test(sig)) return malformed;

  const link: BlobLink = { op: op as BlobLink['op'], key, expiresAt: Number(exp) };
  if (size !== undefined) link.size = Number(size);
  if (name !== undefined) link.fileName = name;
  if (disp !== undefined) link.disposition = disp as Disposition;

  const expected = mac(secret, link);
  const given = Buffer.from(sig, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
  if (!(nowSeconds < link.expiresAt)) return { ok: false, reason: 'expired' };
  return { ok: true, link };
}
