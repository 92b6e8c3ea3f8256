import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { builtinResources } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { compileMapper, setMapperMode, mapperMode } from '../src/codegen/mapper';
import { compileDecoder, compileRowJson, type ByteSink } from '../src/sql/repo';
import type { DialectSupport, JsonColumn } from '../src/sql/dialect';
import { iso } from '../src/clock/index';
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

  it('row printers (stores that print rows as JSON): generated and closures print what JSON.stringify prints of the decoded row', async () => {
    const store = await openSqliteStore();
    try {
      // The printer's dialect switches: instants as ISO text or not; a row's relation ids in one column or one per relation.
      const variants: Array<[string, DialectSupport]> = [
        ['plain', store.dialect],
        ['iso instants, links together', { ...store.dialect, isoInstants: true, allLinkIds: (kinds, parentId) => store.dialect.linkIds(kinds.join(), parentId) }],
      ];
      const ids = fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 });
      for (const res of builtinResources) {
        const relations = Object.entries(res.relationFields);
        const fields: JsonColumn[] = [
          ...res.columns.map((c) => ({ name: c.key, column: c.column, kind: c.kind })),
          ...relations.map(([name, rel]) => ({ name, links: `${res.name}.${rel}` })),
        ];
        for (const [variant, d] of variants) {
          const together = !!d.allLinkIds && relations.length > 0;
          const gen = compileRowJson(res, fields, d, 'generated');
          const clo = compileRowJson(res, fields, d, 'closures');
          const columns = fc.record(Object.fromEntries(res.columns.map((c) => [c.column, c.kind === 'timestamp' && d.isoInstants
            ? fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 4_102_444_800_000 }).map(iso))
            : value(c.kind)])));
          const links = fc.tuple(...relations.map(() => ids), fc.boolean());
          fc.assert(
            fc.property(columns, links, (cols, picked) => {
              const row: Record<string, unknown> = { ...cols };
              const asText = picked[relations.length] as boolean;
              if (together) {
                const all = relations.flatMap(([, rel], i) => (picked[i] as string[]).map((x) => `${res.name}.${rel} ${x}`));
                row.__links = asText ? JSON.stringify(all) : all;
              } else relations.forEach((_, i) => (row[`__l${i}`] = asText ? JSON.stringify(picked[i]) : picked[i]));
              const expected = JSON.stringify(Object.fromEntries(fields.map((f, i) => {
                if (f.links !== undefined) return [f.name, picked[i - res.columns.length]];
                const v = row[f.column];
                if (v == null) return [f.name, null];
                if (f.kind === 'timestamp') return [f.name, typeof v === 'string' ? v : iso(d.decode('timestamp', v) as number)];
                return [f.name, d.decode(f.kind, v) ?? null];
              })));
              expect(gen.print(row), `${res.name} ${variant}`).toBe(expected);
              expect(clo.print(row), `${res.name} ${variant}`).toBe(expected);
              expect(clo.print(row, undefined, true)).toBe(expected.slice(0, -1));
              // Written into a sink (a page's bytes): the same text without the closing brace.
              let written = '';
              const sink: ByteSink = { text: (t) => (written += t), str: (v) => (written += JSON.stringify(v)), byte: (c) => (written += String.fromCharCode(c)) };
              gen.write(sink, row);
              expect(written).toBe(expected.slice(0, -1));
            }),
            { numRuns: 30 },
          );
        }
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
