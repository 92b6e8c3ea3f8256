import type { BodyPart, HttpResponse } from './types';

/**
 * An answer whose body was built in pieces: `bodyParts` holds them, and
 * `body` joins them the first time it is read (then keeps the joined string).
 * Assigning `body` replaces the answer's body and drops the pieces. The
 * accessors act on the object they are read through, so a copy made with
 * its property descriptors behaves the same.
 */
export function piecewiseResponse(status: number, headers: Record<string, string>, parts: readonly BodyPart[]): HttpResponse {
  let joined: string | undefined;
  return {
    status,
    headers,
    bodyParts: parts,
    get body(): string {
      return (joined ??= partsText(parts));
    },
    set body(value: string | Uint8Array | undefined) {
      const self = this as HttpResponse;
      Object.defineProperty(self, 'body', { value, writable: true, enumerable: true, configurable: true });
      delete self.bodyParts;
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
