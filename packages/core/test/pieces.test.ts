import { describe, it, expect } from 'vitest';
import { PIECE_BYTES, returnPieces, takePiece } from '../src/http/pieces';
import { piecewiseResponse } from '../src/http/response';

// Issue 11: an expanded page's bytes are written into pieces whose memory is used again once a front end has
// written the answer (HttpResponse.release); allocated anew for every answer they made V8 collect for
// "external memory pressure". A piece may serve a new answer only after it was handed back, and only once.
describe('the pieces of a page built as bytes', () => {
  it('a piece handed back serves the next page; one never handed back is never handed out again', () => {
    const a = takePiece();
    const b = takePiece();
    expect(a.length).toBe(PIECE_BYTES);
    expect(a.buffer).not.toBe(b.buffer);
    // As an answer holds it: a part of the piece, beside text and bytes of other origins.
    returnPieces(['{"data":', a.subarray(0, 10), new Uint8Array(4), Buffer.from('x')]);
    const c = takePiece();
    expect(c.buffer).toBe(a.buffer);
    const d = takePiece();
    expect(d.buffer).not.toBe(b.buffer);
    expect(d.buffer).not.toBe(a.buffer);
    returnPieces([b, c, d]);
  });

  it('a piece handed back twice is lent once', () => {
    const a = takePiece();
    returnPieces([a.subarray(0, 1)]);
    returnPieces([a.subarray(0, 1)]);
    const first = takePiece();
    const second = takePiece();
    expect(first.buffer).toBe(a.buffer);
    expect(second.buffer).not.toBe(a.buffer);
    returnPieces([first, second]);
  });

  it("an answer's release hands its pieces back once; its body can be read before, not after", () => {
    const piece = takePiece();
    piece.write('"héllo"', 0);
    const parts = ['[', piece.subarray(0, Buffer.byteLength('"héllo"')), ']'];
    const read = piecewiseResponse(200, {}, parts);
    expect(read.body).toBe('["héllo"]');
    read.release!();
    read.release!();
    expect(read.body).toBe('["héllo"]');
    expect(read.bodyParts).toBeUndefined();
    expect(takePiece().buffer).toBe(piece.buffer);

    const unread = piecewiseResponse(200, {}, [takePiece().subarray(0, 0)]);
    unread.release!();
    expect(() => unread.body).toThrow(/released/);
  });
});
