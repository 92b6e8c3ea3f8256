import { clip, ProblemError, validationError } from '../errors/problem';

/**
 * Reading a JSON request body with work bounded by the rules, not by what the
 * client sends (issue "Hardening"): a body is refused before a full parse when
 * it nests deeper than {@link MAX_BODY_DEPTH}, holds an object with more than
 * {@link MAX_OBJECT_KEYS} keys or more than {@link MAX_BODY_VALUES} values in
 * all. An array longer than {@link MAX_ARRAY_ITEMS} is not parsed either: it
 * reaches the operation as an {@link OversizedArray} that carries only its
 * length, so the rule that owns the field answers with its own code
 * (`bulk_too_large`, `batch_too_large`, `validation_failed`) without looking
 * at a single element. Every string and key must be well-formed Unicode
 * without NUL (no store keeps a lone surrogate or U+0000 faithfully).
 */

/** Deepest nesting a body may have (the root object is depth 1). */
export const MAX_BODY_DEPTH = 32;
/** Most items any array in a body may hold before it is refused unread (every rule's maximum is far below). */
export const MAX_ARRAY_ITEMS = 1000;
/** Most keys one object may hold (the widest resource has a few dozen fields). */
export const MAX_OBJECT_KEYS = 1000;
/** Most values (scalars and containers) a whole body may hold. */
export const MAX_BODY_VALUES = 100_000;
/** Bodies up to this many characters are parsed directly; their size already bounds the work. */
const SMALL_BODY = 2048;

/** An array too long for any rule, kept as its length: the field's own rule decides the answer. */
export class OversizedArray {
  constructor(readonly length: number) {}
  toJSON(): unknown {
    return { oversizedArray: this.length };
  }
}

type Step = string | number;

function fieldPath(path: readonly Step[]): string {
  let out = '';
  for (const s of path) out += typeof s === 'number' ? `[${s}]` : out ? `.${s}` : s;
  return clip(out, 200);
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function refused(code: string, path: readonly Step[], message: string, detail: string): ProblemError {
  return validationError([{ field: fieldPath(path), code, message }], detail);
}

/**
 * Decode and parse a JSON body within the bounds above.
 *
 * @example parseJsonBody('{"name":"Launch"}') // → { name: 'Launch' }
 */
export function parseJsonBody(raw: Uint8Array | string): unknown {
  let text: string;
  if (typeof raw === 'string') text = raw;
  else {
    try {
      text = utf8.decode(raw);
    } catch {
      throw refused('invalid_utf8', [], 'the body is not well-formed UTF-8', 'The body is not well-formed UTF-8');
    }
  }
  const spans = text.length > SMALL_BODY ? scan(text) : [];
  let source = text;
  if (spans.length) {
    // Parse the body with each oversized array cut out; the markers go back in afterwards.
    let out = '';
    let at = 0;
    for (const s of spans) {
      out += `${text.slice(at, s.start)}null`;
      at = s.end + 1;
    }
    source = out + text.slice(at);
  }
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (e) {
    throw new ProblemError('validation_failed', 'The body is not valid JSON', {
      errors: [{ field: '', code: 'invalid_json', message: clip((e as Error).message, 200) }],
    });
  }
  for (const s of spans) place(value, s.path, new OversizedArray(s.items));
  check(value);
  return value;
}

interface Span {
  start: number;
  end: number;
  items: number;
  path: Step[];
}

interface Level {
  array: boolean;
  start: number;
  commas: number;
  /** Object: the next string is a key. */
  expectKey: boolean;
  keyStart: number;
  keyEnd: number;
}

/**
 * One pass over the text: nesting depth, keys per object, items per array and
 * values in all (counted as separators and containers: a bound, not an exact
 * count), without building anything. Returns the outermost arrays
 * longer than MAX_ARRAY_ITEMS. Text that is not JSON is left for JSON.parse
 * to refuse.
 */
function scan(text: string): Span[] {
  // One preallocated record per nesting level, reused: the scan allocates nothing per bracket.
  const levels: Level[] = Array.from({ length: MAX_BODY_DEPTH + 1 }, () => ({ array: false, start: 0, commas: 0, expectKey: false, keyStart: -1, keyEnd: -1 }));
  let depth = 0;
  const spans: Span[] = [];
  let values = 0;
  /** Depth (1-based) of the oversized array being skipped (0: none). */
  let skipping = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: find its end, stepping over escapes.
      const start = i;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      if (depth > 0) {
        const top = levels[depth - 1]!;
        if (!top.array && top.expectKey) {
          top.expectKey = false;
          top.keyStart = start;
          top.keyEnd = i;
        }
      }
      continue;
    }
    if (c === 0x5b || c === 0x7b) {
      if (depth === MAX_BODY_DEPTH) {
        throw refused('too_deep', pathOf(text, levels, depth), `nests deeper than ${MAX_BODY_DEPTH} levels`, `The body nests deeper than ${MAX_BODY_DEPTH} levels`);
      }
      const level = levels[depth++]!;
      level.array = c === 0x5b;
      level.start = i;
      level.commas = 0;
      level.expectKey = c === 0x7b;
      level.keyStart = -1;
      level.keyEnd = -1;
      if (skipping === 0 && ++values > MAX_BODY_VALUES) throw tooManyValues();
      continue;
    }
    if (c === 0x5d || c === 0x7d) {
      if (depth === 0) return spans;
      const top = levels[--depth]!;
      if (skipping === depth + 1) {
        spans[spans.length - 1]!.end = i;
        spans[spans.length - 1]!.items = top.commas + 1;
        skipping = 0;
      }
      continue;
    }
    if (c === 0x2c) {
      if (depth === 0) continue;
      const top = levels[depth - 1]!;
      top.commas++;
      if (top.array) {
        if (skipping === 0 && top.commas >= MAX_ARRAY_ITEMS) {
          skipping = depth;
          spans.push({ start: top.start, end: n - 1, items: 0, path: pathOf(text, levels, depth) });
        }
      } else {
        top.expectKey = true;
        if (skipping === 0 && top.commas >= MAX_OBJECT_KEYS) {
          throw refused('too_many_keys', pathOf(text, levels, depth), `holds more than ${MAX_OBJECT_KEYS} keys`, `An object in the body holds more than ${MAX_OBJECT_KEYS} keys`);
        }
      }
      if (skipping === 0 && ++values > MAX_BODY_VALUES) throw tooManyValues();
    }
  }
  return spans;
}

function tooManyValues(): ProblemError {
  return refused('too_many_values', [], `holds more than ${MAX_BODY_VALUES} values`, `The body holds more than ${MAX_BODY_VALUES} values`);
}

/** The path of level `depth` (1-based): keys of the enclosing objects (decoded), indexes of the enclosing arrays. */
function pathOf(text: string, levels: readonly Level[], depth: number): Step[] {
  const path: Step[] = [];
  for (let d = 0; d < depth - 1; d++) {
    const level = levels[d]!;
    if (level.array) path.push(level.commas);
    else {
      let key = '';
      try {
        key = JSON.parse(text.slice(level.keyStart, level.keyEnd + 1)) as string;
      } catch {
        key = '?';
      }
      path.push(key);
    }
  }
  return path;
}

function place(root: unknown, path: readonly Step[], marker: OversizedArray): void {
  if (path.length === 0) return;
  let node = root as Record<string | number, unknown> | null;
  for (let i = 0; i < path.length - 1; i++) {
    const next = node?.[path[i]!];
    if (next === null || typeof next !== 'object') return;
    node = next as Record<string | number, unknown>;
  }
  if (node && typeof node === 'object') node[path[path.length - 1]!] = marker;
}

const isWellFormed: (s: string) => boolean = typeof (String.prototype as { isWellFormed?: () => boolean }).isWellFormed === 'function'
  ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
  : (s) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

/** Where a value sits: its parent's place and its own key or index (a path is built only for an error). */
interface Place {
  parent: Place | null;
  step: Step;
  depth: number;
}

function stepsOf(place: Place | null): Step[] {
  const out: Step[] = [];
  for (let p = place; p; p = p.parent) out.push(p.step);
  return out.reverse();
}

/** Refuse too-deep values (small bodies skip the scan), lone surrogates and NUL, naming the field. Iterative. */
function check(root: unknown): void {
  const stack: [unknown, Place | null][] = [[root, null]];
  while (stack.length) {
    const [v, place] = stack.pop()!;
    const depth = place ? place.depth : 0;
    if (typeof v === 'string') {
      checkString(v, place);
      continue;
    }
    if (v === null || typeof v !== 'object' || v instanceof OversizedArray) continue;
    if (depth >= MAX_BODY_DEPTH) {
      throw refused('too_deep', stepsOf(place), `nests deeper than ${MAX_BODY_DEPTH} levels`, `The body nests deeper than ${MAX_BODY_DEPTH} levels`);
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], { parent: place, step: i, depth: depth + 1 }]);
    } else {
      for (const k of Object.keys(v)) {
        const child: Place = { parent: place, step: k, depth: depth + 1 };
        checkString(k, child);
        stack.push([(v as Record<string, unknown>)[k], child]);
      }
    }
  }
}

function checkString(s: string, place: Place | null): void {
  if (s.includes('\u0000')) {
    throw refused('nul_character', stepsOf(place), 'strings may not contain U+0000', 'Strings in the body may not contain NUL characters');
  }
  if (!isWellFormed(s)) {
    const path = stepsOf(place);
    throw refused('ill_formed_unicode', path, 'holds a lone surrogate (ill-formed Unicode)', `${fieldPath(path) || 'The body'}: strings must be well-formed Unicode`);
  }
}
