/**
 * Object mappers specialised per resource: `(src) => ({ a: src.x ?? null, b: conv(src.y) })`.
 *
 * Row decoders (sql/repo.ts) and response serialisers (services/serialize.ts)
 * run for every row of every page, so they are generated as one object
 * literal per resource (V8 then keeps one hidden class and inlines the reads).
 * Runtimes that forbid `new Function` (a Content-Security-Policy without
 * `unsafe-eval`, some edge runtimes) get plain closures with the same output:
 * chosen automatically when generation is refused, or explicitly with
 * {@link setMapperMode}. A test checks that both modes agree.
 */

/** One output property: its key, the source key it reads and an optional converter (which receives null and undefined too). */
export interface MapperField {
  out: string;
  from: string;
  convert?: (v: unknown) => unknown;
}

export type Mapper = (src: Record<string, unknown>) => Record<string, unknown>;

export type MapperMode = 'generated' | 'closures';

let mode: MapperMode | undefined;

/** Can this runtime compile code at run time? */
function canGenerate(): boolean {
  try {
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    return new Function('return 1')() === 1;
  } catch {
    return false;
  }
}

/**
 * Choose how mappers are built from now on (mappers already built stay as
 * they are). Default: generated where the runtime allows it.
 *
 * @example setMapperMode('closures') // a runtime without eval
 */
export function setMapperMode(m: MapperMode | 'auto'): void {
  mode = m === 'auto' ? undefined : m;
}

/** The mode in force. */
export function mapperMode(): MapperMode {
  mode ??= canGenerate() ? 'generated' : 'closures';
  return mode;
}

/** Build a mapper: a missing source value without a converter becomes null. */
export function compileMapper(fields: readonly MapperField[], m: MapperMode = mapperMode()): Mapper {
  return m === 'generated' ? generated(fields) : closures(fields);
}

function generated(fields: readonly MapperField[]): Mapper {
  const converters: Array<(v: unknown) => unknown> = [];
  const props = fields.map((f) => {
    const read = `src[${JSON.stringify(f.from)}]`;
    if (!f.convert) return `${JSON.stringify(f.out)}: ${read} ?? null`;
    converters.push(f.convert);
    return `${JSON.stringify(f.out)}: c[${converters.length - 1}](${read})`;
  });
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const make = new Function('c', `return (src) => ({ ${props.join(', ')} });`) as (c: Array<(v: unknown) => unknown>) => Mapper;
  return make(converters);
}

function closures(fields: readonly MapperField[]): Mapper {
  const list = [...fields];
  return (src) => {
    const out: Record<string, unknown> = {};
    for (const f of list) out[f.out] = f.convert ? f.convert(src[f.from]) : (src[f.from] ?? null);
    return out;
  };
}
