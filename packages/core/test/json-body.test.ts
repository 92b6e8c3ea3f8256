import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { parseJsonBody, OversizedArray, MAX_ARRAY_ITEMS } from '../src/http/body';
import { ProblemError } from '../src/errors/problem';

/** Issue "Hardening" items 1-3: the bounded body reader agrees with JSON.parse wherever no bound is crossed. */
describe('v3 request bodies: the bounded reader', () => {
  const pad = ' '.repeat(3000); // past the small-body shortcut, so the scan runs

  it('parses like JSON.parse for any JSON value within the bounds (scanned and unscanned)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const text = JSON.stringify(v);
        expect(parseJsonBody(text)).toEqual(JSON.parse(text));
        expect(parseJsonBody(`${pad}${text}${pad}`)).toEqual(JSON.parse(text));
        expect(parseJsonBody(Buffer.from(`${pad}${text}`))).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('strings holding brackets, commas, quotes and backslashes do not confuse the scan', () => {
    const tricky = { a: '[[[{{{', b: '"],}', c: '\\', d: ['\\"', ',,,', '\\\\'], e: { '[': ']' } };
    expect(parseJsonBody(`${pad}${JSON.stringify(tricky)}`)).toEqual(tricky);
    const many = { list: new Array(MAX_ARRAY_ITEMS - 1).fill('a,b]'), n: 1 };
    expect(parseJsonBody(JSON.stringify(many))).toEqual(many);
  });

  it('an array over the item bound arrives as its length, wherever it sits', () => {
    const big = new Array(MAX_ARRAY_ITEMS + 5).fill('x');
    const v = parseJsonBody(JSON.stringify({ keep: [1, 2], members: big, nested: { deeper: [0, { ids: big }] }, after: 'ok' })) as any;
    expect(v.members).toBeInstanceOf(OversizedArray);
    expect(v.members.length).toBe(MAX_ARRAY_ITEMS + 5);
    expect(v.nested.deeper[1].ids).toBeInstanceOf(OversizedArray);
    expect(v.keep).toEqual([1, 2]);
    expect(v.after).toBe('ok');
    const top = parseJsonBody(JSON.stringify(big));
    expect(top).toBeNull();
  });

  const code = (raw: string | Uint8Array) => {
    try {
      parseJsonBody(raw);
      return 'ok';
    } catch (e) {
      return ((e as ProblemError).extras.errors as Array<{ code: string; field: string }>)[0]!;
    }
  };

  it('depth, keys, values, Unicode and UTF-8 are refused with a field', () => {
    expect(code(`${pad}{"a":{"b":${'['.repeat(40)}${']'.repeat(40)}}}`)).toMatchObject({ code: 'too_deep', field: 'a.b[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]' });
    expect(code(`{"x":[${Array.from({ length: 1500 }, (_, i) => `{"k${i}":1}`).join(',')}],"o":{${Array.from({ length: 1200 }, (_, i) => `"k${i}":1`).join(',')}}}`)).toMatchObject({ code: 'too_many_keys', field: 'o' });
    expect(code(`[${new Array(150).fill(`[${new Array(900).fill(0).join(',')}]`).join(',')}]`)).toMatchObject({ code: 'too_many_values' });
    expect(code('{"a":["ok","\\ud800"]}')).toMatchObject({ code: 'ill_formed_unicode', field: 'a[1]' });
    expect(code(`${pad}{"\\udc00":1}`)).toMatchObject({ code: 'ill_formed_unicode', field: '\udc00' });
    expect(code('{"a":"\\u0000"}')).toMatchObject({ code: 'nul_character', field: 'a' });
    expect(code(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]))).toMatchObject({ code: 'invalid_utf8' });
    expect(code('{"a":"\\ud83d\\ude00"}')).toBe('ok');
  });
});
