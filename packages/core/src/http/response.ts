import type { HttpResponse } from './types';

/**
 * An answer whose body was built in pieces: `bodyParts` holds them, and
 * `body` joins them the first time it is read (then keeps the joined string).
 * Assigning `body` replaces the answer's body and drops the pieces. The
 * accessors act on the object they are read through, so a copy made with
 * its property descriptors behaves the same.
 */
export function piecewiseResponse(status: number, headers: Record<string, string>, parts: readonly string[]): HttpResponse {
  let joined: string | undefined;
  return {
    status,
    headers,
    bodyParts: parts,
    get body(): string {
      return (joined ??= parts.join(''));
    },
    set body(value: string | Uint8Array | undefined) {
      const self = this as HttpResponse;
      Object.defineProperty(self, 'body', { value, writable: true, enumerable: true, configurable: true });
      delete self.bodyParts;
    },
  };
}
