import { ProblemError } from '../errors/problem';
import { compileMapper, type MapperMode } from '../codegen/mapper';
import { grants } from '../auth/scopes';
import { iso } from '../clock/index';
import type { Rec, Resource } from '../resources/define-resource';
import type { ExpandNode } from '../query/plan';
import type { ReadContext } from './context';
import { v3Shape, type OutputField } from '../presenters/v3';
import type { JsonColumn } from '../sql/dialect';
import { LINKS, writeIds, type JsonExtra, type JsonRow } from '../sql/repo';
import { accessFields } from './access';
import type { BodyPart } from '../http/types';
import { PIECE_BYTES, returnPieces, takePiece } from '../http/pieces';

/** Expand row budget per request (spec: value not shown; docs/not-shown.md). */
export const EXPAND_ROW_BUDGET = 2000;

export interface MaterializeOptions {
  expand: ExpandNode;
  fields: Map<string, Set<string>>;
  /** Shared across hops of one request. */
  budget: { used: number; max: number };
}

/**
 * Expanding a relation reads its target: the caller needs that resource's
 * read scope on the token and read permission in the role (as on its own
 * list), else 403 permission_denied naming every missing one.
 */
export function assertExpandReadable(ctx: ReadContext, res: Resource, node: ExpandNode): void {
  const missing = new Set<string>();
  const walk = (r: Resource, n: ExpandNode) => {
    for (const [rel, child] of n.children) {
      const def = r.expand[rel]!;
      // Computed entries are the record's own facts (its read grant covers them) unless they show another resource's records.
      if (def.kind === 'entries' && !def.reads) continue;
      const target = ctx.registry.get(def.kind === 'entries' ? def.reads! : def.target);
      if (!grants(ctx.principal.scopes, target.path, 'read') || !grants(ctx.principal.permissions, target.path, 'read')) missing.add(`${target.path}:read`);
      walk(target, child);
    }
  };
  walk(res, node);
  if (missing.size) {
    throw new ProblemError('permission_denied', `expand reads ${[...missing].join(', ')}, which this caller lacks`, { missingPermissions: [...missing] });
  }
}

/** Turn one record into its response form (relation-backed id arrays supplied). */
type Serializer = (rec: Rec) => Record<string, unknown>;
const serializers = new WeakMap<Resource, Serializer>();

const isoOrNull = (v: unknown) => (v === null || v === undefined ? null : iso(v as number));

/** The column part of a response, as the v3 shape describes it, specialised per resource (codegen/mapper.ts). */
export function compileSerializer(res: Resource, mode?: MapperMode): Serializer {
  const fields = v3Shape(res)
    .filter((o) => o.source === 'column')
    .map((o) => ({ out: o.name, from: o.name, ...(o.encoding === 'instant' ? { convert: isoOrNull } : {}) }));
  return compileMapper(fields, mode) as Serializer;
}

function serializerOf(res: Resource): Serializer {
  let fn = serializers.get(res);
  if (!fn) {
    fn = compileSerializer(res);
    serializers.set(res, fn);
  }
  return fn;
}

export function toResponse(res: Resource, rec: Rec, links: Map<string, Map<string, string[]>>, select?: Set<string>): Record<string, unknown> {
  if (!select) {
    const out = serializerOf(res)(rec);
    for (const field in res.relationFields) out[field] = links.get(`${res.name}.${res.relationFields[field]}`)?.get(rec.id) ?? [];
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const o of v3Shape(res)) {
    if (o.name !== 'id' && !select.has(o.name)) continue;
    if (o.source === 'relation') {
      out[o.name] = links.get(`${res.name}.${o.relation}`)?.get(rec.id) ?? [];
      continue;
    }
    const v = rec[o.name];
    out[o.name] = v === null || v === undefined ? null : o.encoding === 'instant' ? iso(v as number) : v;
  }
  return out;
}

/** Count `n` more expanded rows against the request's budget, or fail with expand_budget_exceeded naming the relation. */
function chargeBudget(budget: MaterializeOptions['budget'], relation: string, n: number): void {
  if (budget.used + n > budget.max) {
    throw new ProblemError('expand_budget_exceeded', `Expanding '${relation}' would materialise more than ${budget.max} rows`, { relation, budget: budget.max });
  }
  budget.used += n;
}

/** The relation ids of records, kind → id → ids: carried by the records when they were read with `links`, else one query. */
function linksOfRecords(ctx: ReadContext, kinds: readonly string[], recs: readonly Rec[]): Promise<Map<string, Map<string, string[]>>> | Map<string, Map<string, string[]>> {
  const carried = recs.map((r) => r[LINKS] as Record<string, string[]> | undefined);
  if (recs.length === 0 || !carried.every((c) => c && kinds.every((k) => k in c))) return ctx.repo.linksFor(kinds, recs.map((r) => r.id));
  return new Map(kinds.map((k) => [k, new Map(recs.map((r, i) => [r.id, carried[i]![k]!]))]));
}

/**
 * Serialise records and resolve `expand`, one query per hop over the
 * de-duplicated keys of the whole page (never a query per row), with workspace
 * and soft-delete scoping on every hop and the row budget checked before each.
 */
export async function materialize(ctx: ReadContext, res: Resource, recs: Rec[], o: MaterializeOptions): Promise<Record<string, unknown>[]> {
  const ids = recs.map((r) => r.id);
  const kinds = Object.values(res.relationFields).map((rel) => `${res.name}.${rel}`);
  const links = kinds.length ? await linksOfRecords(ctx, kinds, recs) : new Map<string, Map<string, string[]>>();
  const select = o.fields.get(res.path);
  const outs = recs.map((r) => toResponse(res, r, links, select));
  const present = res.hooks?.present;
  if (present) recs.forEach((r, i) => present(ctx, r, outs[i]!));
  for (const [relName, child] of o.expand.children) {
    const rel = res.expand[relName]!;
    const charge = (n: number) => chargeBudget(o.budget, relName, n);
    if (rel.kind === 'entries') {
      const entries = await rel.load(ctx, recs);
      charge([...entries.values()].reduce((n, e) => n + e.length, 0));
      recs.forEach((r, i) => {
        outs[i]![relName] = entries.get(r.id) ?? [];
      });
      continue;
    }
    const target = ctx.registry.get(rel.target);
    if (rel.kind === 'one') {
      const keys = [...new Set(recs.map((r) => r[rel.field]).filter((v): v is string => typeof v === 'string'))];
      charge(keys.length);
      // Rows of projects the caller cannot open expand to null, like missing ones.
      const found = await ctx.access.filterRecords(target, await ctx.repo.getMany(target, ctx.teamId, keys, undefined, { links: true }));
      const objs = await materialize(ctx, target, found, { ...o, expand: child });
      const byId = new Map(found.map((f, i) => [f.id, objs[i]!]));
      recs.forEach((r, i) => {
        const k = r[rel.field];
        outs[i]![relName] = typeof k === 'string' ? byId.get(k) ?? null : null;
      });
    } else if (rel.kind === 'many') {
      const kind = `${res.name}.${rel.relation}`;
      const linked = links.get(kind) ?? (await ctx.repo.linksOf(kind, ids));
      const keys = [...new Set([...linked.values()].flat())];
      charge(keys.length);
      const found = await ctx.access.filterRecords(target, await ctx.repo.getMany(target, ctx.teamId, keys, undefined, { links: true }));
      const objs = await materialize(ctx, target, found, { ...o, expand: child });
      const byId = new Map(found.map((f, i) => [f.id, objs[i]!]));
      recs.forEach((r, i) => {
        outs[i]![relName] = (linked.get(r.id) ?? []).map((k) => byId.get(k)).filter((x) => x !== undefined);
      });
    } else {
      const column = target.columnOf[rel.field]!;
      const room = o.budget.max - o.budget.used;
      const found = await ctx.access.filterRecords(target, await ctx.repo.findBy(target, ctx.teamId, column, ids, { orderBy: 'created_at', limit: room + 1 }));
      charge(found.length);
      const objs = await materialize(ctx, target, found, { ...o, expand: child });
      const groups = new Map<string, Record<string, unknown>[]>();
      found.forEach((f, i) => {
        const k = f[rel.field] as string;
        const g = groups.get(k);
        if (g) g.push(objs[i]!);
        else groups.set(k, [objs[i]!]);
      });
      recs.forEach((r, i) => {
        outs[i]![relName] = groups.get(r.id) ?? [];
      });
    }
  }
  return outs;
}

/** One record in its plain response form (every field, nothing expanded): what events and operation answers carry. */
export async function presentRecord(ctx: ReadContext, res: Resource, rec: Rec): Promise<Record<string, unknown>> {
  const [out] = await materialize(ctx, res, [rec], { expand: { children: new Map() }, fields: new Map(), budget: { used: 0, max: EXPAND_ROW_BUDGET } });
  return out!;
}

/**
 * The read fast path: when nothing is expanded and no hook computes a field,
 * a page's JSON is built by the database (`DialectSupport.jsonObject`) from
 * the v3 shape: the selected columns and relation id arrays, in v3Shape
 * order. Answers the keys to ask for, or undefined when the page must be
 * built from records (the one path every store has; both give the same bytes).
 */
export function jsonShape(res: Resource, expand: ExpandNode, fields: Map<string, Set<string>>): JsonColumn[] | undefined {
  if (expand.children.size > 0 || res.hooks?.present) return undefined;
  if (fields.size > (fields.has(res.path) ? 1 : 0)) return undefined;
  const select = fields.get(res.path);
  if (!select) {
    // The whole shape: the same every request, built once.
    let whole = wholeShapes.get(res);
    if (!whole) wholeShapes.set(res, (whole = shownFields(res).map(jsonColumn(res))));
    return whole;
  }
  return shownFields(res, select).map(jsonColumn(res));
}

const wholeShapes = new WeakMap<Resource, JsonColumn[]>();

/** The v3 fields a response shows, in v3Shape order: all of them, or `id` and the selected ones. */
function shownFields(res: Resource, select?: Set<string>): readonly OutputField[] {
  return select ? v3Shape(res).filter((o) => o.name === 'id' || select.has(o.name)) : v3Shape(res);
}

/** A shown field as a key of the row's JSON: its column, or its relation's link kind. */
function jsonColumn(res: Resource) {
  return (o: OutputField): JsonColumn => (o.source === 'column' ? { name: o.name, column: o.column, kind: o.kind } : { name: o.name, links: `${res.name}.${o.relation}` });
}

/**
 * The `data` array of a page in pieces: the database-built objects, joined.
 * A page of one piece is one string; a larger one is written as UTF-8 bytes
 * into pieces whose memory serves again once the answer is written
 * (ByteParts), never into strings of 32 K characters that live until the
 * socket has them.
 */
export function jsonRows(rows: readonly JsonRow[]): BodyPart[] {
  // Rows printed here (a store that prints rows: `write`) are written as bytes as they are printed; a small page of
  // database-built rows is joined as text without being encoded.
  const printed = rows.length > 0 && rows[0]!.json === undefined;
  if (!printed) {
    let chars = 2;
    for (let i = 0; i < rows.length; i++) chars += rows[i]!.json!.length + 1;
    if (chars <= PART_CHARS) return jsonArrayParts(rows.map((r) => r.json!));
  }
  const out = new ByteParts();
  out.byte(OPEN_BRACKET);
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) out.byte(COMMA);
    const r = rows[i]!;
    if (r.write) {
      r.write(out);
      out.byte(CLOSE_BRACE);
    } else out.text(r.json!);
  }
  out.byte(CLOSE_BRACKET);
  return out.done(printed);
}

/** The most characters one piece of a page's JSON text holds (one element longer than this is a piece of its own). */
const PART_CHARS = 32 * 1024;

/**
 * Text in pieces of about PART_CHARS characters, each one flat string (one
 * join, never a rope), whose concatenation is the text. A page is not one
 * string: V8 gives every string over 128 KiB an allocation of its own (mapped,
 * faulted in, unmapped at the next collection), which costs a large page more
 * than printing and writing it.
 */
class TextParts {
  private readonly parts: string[] = [];
  private pending: string[] = [];
  private chars = 0;
  add(text: string): void {
    this.pending.push(text);
    this.chars += text.length;
  }
  /** An element ended: a piece long enough ends here. */
  boundary(): void {
    if (this.chars >= PART_CHARS) this.flush();
  }
  done(): string[] {
    this.flush();
    return this.parts;
  }
  private flush(): void {
    if (this.pending.length === 0) return;
    this.parts.push(this.pending.join(''));
    this.pending = [];
    this.chars = 0;
  }
}

/** A JSON array of already-serialised elements as text in pieces (see TextParts). */
export function jsonArrayParts(items: readonly string[]): string[] {
  const text = new TextParts();
  text.add('[');
  for (let i = 0; i < items.length; i++) {
    if (i > 0) text.add(',');
    text.add(items[i]!);
    text.boundary();
  }
  text.add(']');
  return text.done();
}

const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** What JSON.stringify escapes in a string: quotes, backslashes, control characters, lone surrogates (paired ones come here too, and are printed by JSON.stringify). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A page as UTF-8 bytes in pieces of about PIECE_BYTES, never as strings
 * that live until the socket has them. An expanded page repeats its related
 * objects on every row (the project and the status on each task: 136 KB for
 * 50 tasks against 43 KB unexpanded). As text, each copy was another 136 KB
 * of strings on V8's heap per request, and under concurrency (many requests
 * between the same awaits) the scavenger copied them from one space to the
 * next and promoted them: at 50 requests at once, an expanded page spent
 * 212 µs a request collecting. Bytes live outside the heap: a related object
 * is encoded once and copied for each row, the rest is written as it comes.
 * A plain page's rows are written as they come (jsonRows): 200 tasks as
 * pieces of 32 K characters cost Postgres at 50 connections 6.9 ms of server
 * CPU a page, as bytes 5.3 ms. Every string is written whole into one piece,
 * so no piece ends inside a character. The pieces' memory comes from
 * http/pieces.ts, used again once the front end that wrote an answer hands
 * it back (`HttpResponse.release`).
 */
class ByteParts {
  private readonly parts: Uint8Array[] = [];
  private buf = takePiece();
  private off = 0;
  /** A string's bytes (at most three a UTF-16 unit). */
  text(text: string): void {
    const n = text.length;
    if (this.off + n * 3 > this.buf.length) this.next(n * 3);
    if (n <= 64) {
      // Short ASCII text (keys' values, id arrays) written here: cheaper than a call to the encoder.
      const buf = this.buf;
      let off = this.off;
      let i = 0;
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c >= 0x80) break;
        buf[off++] = c;
      }
      if (i === n) {
        this.off = off;
        return;
      }
    }
    this.off += this.buf.write(text, this.off);
  }
  /** A value as JSON.stringify prints it (a string quoted and escaped). */
  str(value: unknown): void {
    if (typeof value !== 'string') {
      this.text(JSON.stringify(value) ?? 'null');
      return;
    }
    const n = value.length;
    if (n <= 64) {
      // Short ASCII needing no escape written here, quotes and all; anything else below.
      if (this.off + n + 2 > this.buf.length) this.next(n + 2);
      const buf = this.buf;
      let off = this.off;
      buf[off++] = QUOTE;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c < 0x20 || c >= 0x80 || c === QUOTE || c === BACKSLASH) break;
        buf[off++] = c;
      }
      if (i === n) {
        buf[off++] = QUOTE;
        this.off = off;
        return;
      }
    }
    if (NEEDS_ESCAPE.test(value)) {
      this.text(JSON.stringify(value));
      return;
    }
    this.byte(QUOTE);
    this.text(value);
    this.byte(QUOTE);
  }
  /** Bytes already encoded (a related object, a key). */
  bytes(b: Uint8Array): void {
    if (this.off + b.length > this.buf.length) this.next(b.length);
    this.buf.set(b, this.off);
    this.off += b.length;
  }
  byte(c: number): void {
    if (this.off === this.buf.length) this.next(1);
    this.buf[this.off++] = c;
  }
  /** The pieces; with `small`, a page that fits one piece of text is that text (its piece goes back at once). */
  done(small = false): BodyPart[] {
    if (small && this.parts.length === 0 && this.off <= PART_CHARS) {
      const text = this.buf.toString('utf8', 0, this.off);
      returnPieces([this.buf]);
      return [text];
    }
    if (this.off > 0) this.parts.push(this.buf.subarray(0, this.off));
    return this.parts;
  }
  private next(most: number): void {
    if (this.off > 0) this.parts.push(this.buf.subarray(0, this.off));
    // A string longer than a piece gets memory of its own size (not from the pool of pieces: http/pieces.ts).
    this.buf = most > PIECE_BYTES ? Buffer.allocUnsafe(most) : takePiece();
    this.off = 0;
  }
}

/**
 * One key a fast-path page appends to each row's database-built columns: a
 * relation's ids, or an expanded relation; with its constant bytes
 * (`,"name":` and the like) encoded once per plan.
 */
type TailKey = {
  name: string;
  extra: number;
  hop?: number;
  one?: boolean;
  /** `,"name":` */
  key: Uint8Array;
  /** `,"name":[` */
  open: Uint8Array;
  /** `,"name":[]` */
  empty: Uint8Array;
  /** `,"name":null` */
  none: Uint8Array;
};

function tailKey(name: string, extra: number, more: { one?: boolean } = {}): TailKey {
  const key = `,${JSON.stringify(name)}:`;
  return { name, extra, ...more, key: Buffer.from(key), open: Buffer.from(`${key}[`), empty: Buffer.from(`${key}[]`), none: Buffer.from(`${key}null`) };
}

/** How a page is built on the fast path: the columns in the row's JSON, what is selected beside it, and how the rest is appended. */
export interface JsonPagePlan {
  columns: JsonColumn[];
  extras: JsonExtra[];
  /** Print the page's `data` array in pieces (`jsonArrayParts`; bytes where expanded: ByteParts), expanding, where asked, one query per hop. */
  print(ctx: ReadContext, rows: readonly JsonRow[]): Promise<BodyPart[]> | BodyPart[];
}

/** Expanded plans without a field selection, per registry, by resource and expand: the same every request (bounded: the orders of a resource's relations are many). */
const expandedPlans = new WeakMap<object, Map<string, JsonPagePlan | undefined>>();
const MOST_EXPANDED_PLANS = 256;

/**
 * The read fast path for a page: undefined where it must be built from
 * records. Without expand, every shown field (relation ids included) is in
 * the database-built object. With expand one level deep over `one` and
 * `many` relations (no computed fields anywhere), the object holds the
 * columns; relation ids and the related rows' database-built objects are
 * appended here in the order the rows path gives them, with the same row
 * budget and access filtering, one query per hop.
 */
export function jsonPagePlan(registry: ReadContext['registry'], res: Resource, expand: ExpandNode, fields: Map<string, Set<string>>): JsonPagePlan | undefined {
  if (expand.children.size === 0) {
    const columns = jsonShape(res, expand, fields);
    return columns && { columns, extras: [], print: (_ctx, rows) => jsonRows(rows) };
  }
  if (fields.size > 0) return expandedPlan(registry, res, expand, fields);
  let plans = expandedPlans.get(registry);
  if (!plans) expandedPlans.set(registry, (plans = new Map()));
  let key = res.path;
  for (const [name, child] of expand.children) key += child.children.size > 0 ? `,${name}(…)` : `,${name}`;
  if (plans.has(key)) return plans.get(key);
  const plan = expandedPlan(registry, res, expand, fields);
  if (plans.size < MOST_EXPANDED_PLANS) plans.set(key, plan);
  return plan;
}

function expandedPlan(registry: ReadContext['registry'], res: Resource, expand: ExpandNode, fields: Map<string, Set<string>>): JsonPagePlan | undefined {
  if (res.hooks?.present) return undefined;
  const columns: JsonColumn[] = [];
  const extras: JsonExtra[] = [];
  const tail: TailKey[] = [];
  for (const c of shownFields(res, fields.get(res.path)).map(jsonColumn(res))) {
    if (c.links === undefined) columns.push(c);
    else tail.push(tailKey(c.name, extras.push({ links: c.links }) - 1));
  }
  const hops: Array<{ name: string; target: Resource; shape: JsonColumn[]; extra: number; one: boolean; key: Uint8Array }> = [];
  for (const [name, child] of expand.children) {
    const rel = res.expand[name]!;
    if (child.children.size > 0 || (rel.kind !== 'one' && rel.kind !== 'many') || columns.some((c) => c.name === name)) return undefined;
    if (res.membersOnly || registry.get(rel.target).membersOnly) return undefined;
    const target = registry.get(rel.target);
    if (target.hooks?.present) return undefined;
    const shape = jsonShape(target, { children: new Map() }, new Map(fields.has(target.path) ? [[target.path, fields.get(target.path)!]] : []));
    if (!shape) return undefined;
    let key = tail.find((k) => k.name === name && k.hop === undefined && !k.one);
    if (rel.kind === 'many') {
      if (!key) tail.push((key = tailKey(name, extras.push({ links: `${res.name}.${rel.relation}` }) - 1)));
    } else {
      if (key) return undefined;
      tail.push((key = tailKey(name, extras.push({ column: res.columnOf[rel.field]! }) - 1, { one: true })));
    }
    key.hop = hops.push({ name, target, shape, extra: key.extra, one: rel.kind === 'one', key: key.key }) - 1;
  }
  const expanded = new Set(hops.filter((h) => !h.one).map((h) => h.extra));
  return {
    columns,
    extras,
    async print(ctx, rows) {
      const budget = { used: 0, max: EXPAND_ROW_BUDGET };
      const ids = (v: unknown): string[] => (typeof v === 'string' ? JSON.parse(v) : (v as string[] | null) ?? []);
      // Only the relations a hop expands are parsed; the others are printed as the store gave them.
      const linked = extras.map((_, i) => (expanded.has(i) ? rows.map((r) => ids(r.extra![i])) : undefined));
      // Every hop's keys come from the page itself: charge the budget hop by hop (as the rows path does), then read the hops at once.
      const keysOf = hops.map((hop) => {
        const keys = new Set<string>();
        if (hop.one) {
          for (const r of rows) {
            const v = r.extra![hop.extra];
            if (typeof v === 'string') keys.add(v);
          }
        } else for (const list of linked[hop.extra]!) for (const id of list) keys.add(id);
        chargeBudget(budget, hop.name, keys.size);
        return [...keys];
      });
      const objects = await Promise.all(hops.map(async (hop, h) => {
        const got = (await ctx.repo.getManyJson(hop.target, ctx.teamId, keysOf[h]!, hop.shape, accessFields(hop.target)))!;
        const open = new Set((await ctx.access.filterRecords(hop.target, got.map((g) => g.rec))).map((r) => r.id));
        // Each related object encoded once, copied for every row showing it (a `one` relation's with its key before it).
        // (A row remembered between requests keeps its bytes: sql/json-memo.ts.)
        const byId = new Map<string, Uint8Array>();
        for (const g of got) {
          if (!open.has(g.rec.id)) continue;
          const bytes = (g.bytes ??= Buffer.from(g.json));
          byId.set(g.rec.id, hop.one ? Buffer.concat([hop.key, bytes]) : bytes);
        }
        return byId;
      }));
      const out = new ByteParts();
      out.byte(OPEN_BRACKET);
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!;
        if (i > 0) out.byte(COMMA);
        if (r.write) r.write(out);
        else out.text(r.json!.slice(0, -1));
        for (const k of tail) {
          if (k.hop === undefined) {
            const v = r.extra![k.extra];
            if (typeof v === 'string') {
              out.bytes(k.key);
              out.text(v);
            } else if (v === null || v === undefined || (v as unknown[]).length === 0) out.bytes(k.empty);
            else {
              out.bytes(k.key);
              writeIds(out, v as unknown[]);
            }
          } else if (k.one) {
            const v = r.extra![k.extra];
            out.bytes((typeof v === 'string' && objects[k.hop]!.get(v)) || k.none);
          } else {
            const byId = objects[k.hop]!;
            out.bytes(k.open);
            let first = true;
            for (const id of linked[k.extra]![i]!) {
              const obj = byId.get(id);
              if (obj === undefined) continue;
              if (!first) out.byte(COMMA);
              out.bytes(obj);
              first = false;
            }
            out.byte(CLOSE_BRACKET);
          }
        }
        out.byte(CLOSE_BRACE);
      }
      out.byte(CLOSE_BRACKET);
      return out.done();
    },
  };
}
