import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { builtinResources } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { compileMapper, setMapperMode, mapperMode } from '../src/codegen/mapper';
import { compileDecoder } from '../src/sql/repo';
import { compileSerializer } from '../src/services/serialize';

/** The generated mappers and the closure fallback (runtimes without eval) give the same output. */
describe('row decoders and serialisers: generated code and plain closures agree', () => {
  const value = (kind: string) => {
    switch (kind) {
      case 'timestamp': return fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 4_102_444_800_000 }));
      case 'boolean': return fc.oneof(fc.constant(null), fc.boolean(), fc.constantFrom(0, 1));
      case 'number': case 'integer': return fc.oneof(fc.constant(null), fc.integer());
      case 'json': return fc.oneof(fc.constant(null), fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }).map((a) => JSON.stringify(a)));
      default: return fc.oneof(fc.constant(null), fc.constant(undefined), fc.string({ maxLength: 8 }));
    }
  };

  it('for every built-in resource, on random rows', async () => {
    const store = await openSqliteStore();
    try {
      for (const res of builtinResources) {
        const decG = compileDecoder(res, store.dialect, 'generated');
        const decC = compileDecoder(res, store.dialect, 'closures');
        const serG = compileSerializer(res, 'generated');
        const serC = compileSerializer(res, 'closures');
        const row = fc.record(Object.fromEntries(res.columns.map((c) => [c.column, value(c.kind)])));
        fc.assert(
          fc.property(row, (r) => {
            const a = decG(r as Record<string, unknown>);
            const b = decC(r as Record<string, unknown>);
            expect(JSON.stringify(b), res.name).toBe(JSON.stringify(a));
            expect(JSON.stringify(serC(b)), res.name).toBe(JSON.stringify(serG(a)));
          }),
          { numRuns: 50 },
        );
      }
    } finally {
      await store.close();
    }
  });

  it('keys are copied literally (quotes, spaces) and missing values become null unless converted', () => {
    const fields = [{ out: 'a"b', from: 'x y' }, { out: 'n', from: 'missing' }, { out: 'c', from: 'v', convert: (v: unknown) => (v == null ? 'none' : `<${v}>`) }];
    for (const m of ['generated', 'closures'] as const) {
      expect(compileMapper(fields, m)({ 'x y': 1, v: undefined })).toEqual({ 'a"b': 1, n: null, c: 'none' });
      expect(Object.keys(compileMapper(fields, m)({}))).toEqual(['a"b', 'n', 'c']);
    }
  });

  it('the mode is selectable and defaults to generated where eval works', () => {
    expect(mapperMode()).toBe('generated');
    setMapperMode('closures');
    expect(mapperMode()).toBe('closures');
    setMapperMode('auto');
    expect(mapperMode()).toBe('generated');
  });
});
