import type { BodyPart, HttpResponse } from './types';
import { returnPieces } from './pieces';

/**
 * An answer whose body was built in pieces: `bodyParts` holds them, and
 * `body` joins them the first time it is read (then keeps the joined string).
 * Assigning `body` replaces the answer's body and drops the pieces.
 * `release` hands the pieces' memory back (http/pieces.ts) once a front end
 * has written them. The accessors act on the object they are read through,
 * so a copy made with its property descriptors behaves the same.
 */
export function piecewiseResponse(status: number, headers: Record<string, string>, parts: readonly BodyPart[]): HttpResponse {
  let joined: string | undefined;
  let released = false;
  return {
    status,
    headers,
    bodyParts: parts,
    get body(): string {
      if (joined === undefined && released) throw new Error('pmapi: this answer was released by its front end; its body can no longer be read');
      return (joined ??= partsText(parts));
    },
    set body(value: string | Uint8Array | undefined) {
      const self = this as HttpResponse;
      Object.defineProperty(self, 'body', { value, writable: true, enumerable: true, configurable: true });
      delete self.bodyParts;
    },
    release() {
      if (released) return;
      released = true;
      delete (this as HttpResponse).bodyParts;
      returnPieces(parts);
    },
  };
}

const utf8 = new TextDecoder();

/** Pieces of a body as one string (a piece of bytes holds whole characters: decoded on its own). */
export function partsText(parts: readonly BodyPart[]): string {
  const out = new Array<string>(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    out[i] = typeof p === 'string' ? p : utf8.decode(p);
  }
  return out.join('');
}
