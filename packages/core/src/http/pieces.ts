/**
 * The memory of the byte pieces an expanded page is written into
 * (serialize.ts ByteParts), used again once a front end has written an
 * answer and hands its pieces back (`HttpResponse.release`).
 *
 * Each piece is PIECE_BYTES off V8's heap. Allocated anew for every answer
 * (136 KB for a page of 50 tasks with their project, status and assignees),
 * they made V8 collect for "external memory pressure": at 10 connections on
 * SQLite, 60 full collections (569 ms) in 7.4 s of expanded pages against
 * 10 for plain pages. A piece handed back is kept (at most FREE_MAX of them,
 * 8 MB) for the next page. The pool must hold what is in flight: at 50
 * connections about 50 pages at once; with 64 pieces of 64 KB it ran dry and
 * the expanded page was back at 1.7 times the plain one, with 256 of 32 KB
 * (less of each page's last piece left empty) 1.36 to 1.47 times.
 */
export const PIECE_BYTES = 32 * 1024;
const FREE_MAX = 256;
const free: Buffer[] = [];
/** Pieces now in an answer, by their memory: each comes back once, and only pieces from here come back. */
const lent = new WeakMap<ArrayBufferLike, Buffer>();

/** A piece of PIECE_BYTES to write into (its contents are whatever it held before). */
export function takePiece(): Buffer {
  const piece = free.pop() ?? Buffer.allocUnsafeSlow(PIECE_BYTES);
  lent.set(piece.buffer, piece);
  return piece;
}

/**
 * Hand back the pieces among `parts` that came from {@link takePiece}: the
 * caller guarantees nothing reads them anymore (the bytes were written to
 * the socket, or copied). Anything else among them is left alone.
 */
export function returnPieces(parts: readonly unknown[]): void {
  for (const p of parts) {
    if (!(p instanceof Uint8Array)) continue;
    const piece = lent.get(p.buffer);
    if (piece === undefined) continue;
    lent.delete(p.buffer);
    if (free.length < FREE_MAX) free.push(piece);
  }
}
