/*
 * A tiny strict JSON Schema subset for the golden tests (issue 15 "Frozen").
 *
 * Keywords: type (one name or a list), properties, required,
 * additionalProperties (must be false), items, enum, const, format
 * (date-time, id), pattern, maxItems. Any other keyword in a schema is an
 * error, so a golden file cannot carry a rule the validator silently skips.
 * Objects are closed: a schema that describes an object must say
 * `additionalProperties: false` and list every key in `required`.
 *
 * `inferSchema` writes the strictest schema of a value: every key required,
 * no extra keys, array items merged over all elements, integers as
 * "integer", ISO instants as format date-time, ids (key `id` or `*_id`) as
 * format id. Values themselves are not recorded (they vary: ids, times).
 */

export type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';

export interface Schema {
  type?: JsonType | JsonType[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: false;
  items?: Schema;
  maxItems?: number;
  enum?: Array<string | number | boolean | null>;
  const?: string | number | boolean | null;
  format?: 'date-time' | 'id';
  pattern?: string;
}

export interface SchemaError {
  /** Where in the body: `$`, `$.subteams[0].name`. */
  path: string;
  message: string;
}

const KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'maxItems', 'enum', 'const', 'format', 'pattern']);
const TYPES: readonly JsonType[] = ['object', 'array', 'string', 'integer', 'number', 'boolean', 'null'];
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
/** Spec "Conventions" (first document): ids are `^[0-9A-Za-z_!]+$`. */
const ID = /^[0-9A-Za-z_!]+$/;

function typeOf(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'object') return typeof v as JsonType;
  throw new Error(`not a JSON value: ${typeof v}`);
}

function typesOf(s: Schema): JsonType[] {
  return s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
}

const key = (path: string, k: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);

/** Is the schema itself well formed (known keywords only, closed objects)? Errors name the schema path. */
export function checkSchema(s: Schema, path = '$'): SchemaError[] {
  const out: SchemaError[] = [];
  if (s === null || typeof s !== 'object' || Array.isArray(s)) return [{ path, message: 'schema is not an object' }];
  for (const k of Object.keys(s)) if (!KEYWORDS.has(k)) out.push({ path, message: `unsupported schema keyword "${k}"` });
  const types = typesOf(s);
  if (types.length === 0 && s.const === undefined && s.enum === undefined) out.push({ path, message: 'schema names no type' });
  for (const t of types) if (!TYPES.includes(t)) out.push({ path, message: `unknown type "${t}"` });
  if (types.includes('object')) {
    if (s.additionalProperties !== false) out.push({ path, message: 'object schema must say additionalProperties: false' });
    const props = Object.keys(s.properties ?? {});
    const req = s.required ?? [];
    if (props.length !== req.length || props.some((p) => !req.includes(p))) out.push({ path, message: 'object schema must require every property it lists' });
    for (const [k, sub] of Object.entries(s.properties ?? {})) out.push(...checkSchema(sub, key(path, k)));
  }
  if (types.includes('array')) {
    if (s.items === undefined && s.maxItems !== 0) out.push({ path, message: 'array schema must give items (or maxItems: 0)' });
    if (s.items !== undefined) out.push(...checkSchema(s.items, `${path}[]`));
  }
  return out;
}

/** Every way `v` breaks `s`, each with the path in the body where it does. */
export function validate(s: Schema, v: unknown, path = '$'): SchemaError[] {
  const out: SchemaError[] = [];
  const t = typeOf(v);
  const types = typesOf(s);
  if (types.length && !types.includes(t) && !(t === 'integer' && types.includes('number'))) {
    return [{ path, message: `is ${t}${t === 'null' ? '' : ` ${JSON.stringify(v).slice(0, 80)}`}, expected ${types.join(' or ')}` }];
  }
  if (s.const !== undefined && v !== s.const) out.push({ path, message: `is ${JSON.stringify(v)}, expected exactly ${JSON.stringify(s.const)}` });
  if (s.enum !== undefined && !s.enum.some((e) => e === v)) out.push({ path, message: `is ${JSON.stringify(v)}, expected one of ${JSON.stringify(s.enum)}` });
  if (typeof v === 'string') {
    if (s.format === 'date-time' && !(DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)))) out.push({ path, message: `is ${JSON.stringify(v)}, expected a date-time` });
    if (s.format === 'id' && !ID.test(v)) out.push({ path, message: `is ${JSON.stringify(v)}, expected an id` });
    if (s.pattern !== undefined && !new RegExp(s.pattern).test(v)) out.push({ path, message: `is ${JSON.stringify(v)}, expected to match ${s.pattern}` });
  }
  if (t === 'object') {
    const o = v as Record<string, unknown>;
    const props = s.properties ?? {};
    for (const k of s.required ?? []) if (!(k in o)) out.push({ path: key(path, k), message: 'is missing (required)' });
    for (const [k, val] of Object.entries(o)) {
      const sub = props[k];
      if (sub) out.push(...validate(sub, val, key(path, k)));
      else if (s.additionalProperties === false) out.push({ path: key(path, k), message: `is an extra key (value ${JSON.stringify(val)?.slice(0, 80)})` });
    }
  }
  if (t === 'array') {
    const a = v as unknown[];
    if (s.maxItems !== undefined && a.length > s.maxItems) out.push({ path, message: `holds ${a.length} items, at most ${s.maxItems} allowed` });
    if (s.items) a.forEach((x, i) => out.push(...validate(s.items!, x, `${path}[${i}]`)));
  }
  return out;
}

const ORDER = new Map(TYPES.map((t, i) => [t, i]));

function setTypes(s: Schema, types: JsonType[]): void {
  const u = [...new Set(types)].sort((x, y) => ORDER.get(x)! - ORDER.get(y)!);
  s.type = u.length === 1 ? u[0]! : u;
}

/**
 * The one schema two inferred schemas share: types united, object properties
 * merged (a key missing on one side is no longer required), items merged, a
 * format kept only when every string had it.
 */
export function mergeSchemas(a: Schema, b: Schema): Schema {
  const out: Schema = {};
  setTypes(out, [...typesOf(a), ...typesOf(b)]);
  const ta = typesOf(a);
  const tb = typesOf(b);
  if (ta.includes('object') || tb.includes('object')) {
    const pa = a.properties;
    const pb = b.properties;
    const props: Record<string, Schema> = {};
    for (const k of new Set([...Object.keys(pa ?? {}), ...Object.keys(pb ?? {})])) {
      const x = pa?.[k];
      const y = pb?.[k];
      props[k] = x && y ? mergeSchemas(x, y) : (x ?? y)!;
    }
    out.properties = props;
    out.required = Object.keys(props).filter((k) => (!pa || pa[k]) && (!pb || pb[k]));
    out.additionalProperties = false;
  }
  if (ta.includes('array') || tb.includes('array')) {
    if (a.items && b.items) out.items = mergeSchemas(a.items, b.items);
    else if (a.items || b.items) out.items = (a.items ?? b.items)!;
    else out.maxItems = 0;
  }
  const sa = ta.includes('string');
  const sb = tb.includes('string');
  if (sa || sb) {
    const fa = sa ? a.format : undefined;
    const fb = sb ? b.format : undefined;
    const f = sa && sb ? (fa === fb ? fa : undefined) : (fa ?? fb);
    if (f) out.format = f;
  }
  return out;
}

/** The strictest schema of `v` (see the module comment); `name` is the key `v` sits under. */
export function inferSchema(v: unknown, name = ''): Schema {
  const t = typeOf(v);
  if (t === 'object') {
    const properties: Record<string, Schema> = {};
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) properties[k] = inferSchema(val, k);
    return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
  }
  if (t === 'array') {
    const a = v as unknown[];
    if (a.length === 0) return { type: 'array', maxItems: 0 };
    const itemName = name.endsWith('_ids') || name === 'members' ? 'id' : '';
    return { type: 'array', items: a.map((x) => inferSchema(x, itemName)).reduce(mergeSchemas) };
  }
  if (t === 'string') {
    const s = v as string;
    if (DATE_TIME.test(s) && !Number.isNaN(Date.parse(s))) return { type: 'string', format: 'date-time' };
    if ((name === 'id' || name.endsWith('_id')) && ID.test(s)) return { type: 'string', format: 'id' };
    return { type: 'string' };
  }
  return { type: t };
}
