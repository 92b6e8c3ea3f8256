import { createHash } from 'node:crypto';
import { ProblemError } from '../errors/problem';
import type { FilterOp, Resource } from '../resources/define-resource';
import type { Registry } from '../resources/registry';
import type { StorageKind } from '../resources/fields';
import { invalidParam, PAGE_PARAMS, parsePageQuery, singleParams, unknownParam } from './page';
import type { Condition, ExpandNode, FieldCondition, ListPlan, SortPlan } from './plan';

export { MAX_LIMIT, DEFAULT_LIMIT } from './page';
export const MAX_EXPAND_DEPTH = 4;
const MAX_IN_VALUES = 200;
/**
 * Longest filter value (and `in` list item), in characters: the longest text
 * any field holds is a task name (1024). It also keeps an escaped LIKE
 * pattern far below SQLite's 50,000-byte limit.
 */
export const MAX_FILTER_VALUE = 1024;

const OPS = new Set<FilterOp>(['eq', 'in', 'contains', 'startsWith', 'gt', 'gte', 'lt', 'lte', 'null', 'notNull']);

export interface ParsedList {
  plan: ListPlan;
  /** Normalised sort (`-updatedAt`), stored in cursors. */
  sortKey: string;
  /** Fingerprint of the filters, stored in cursors. */
  filterKey: string;
  /** The list was restricted to one project with `projectId`. */
  projectId?: string;
  /** The result is empty by definition (`scope=personal`). */
  none: boolean;
  /** A filter restricts the list to rows outside projects (a chat's messages): no project bound applies. */
  outsideProjects?: boolean;
}

const invalid = invalidParam;

/** Parse a value of a filter according to the field's storage kind. */
function parseValue(name: string, kind: StorageKind, raw: string): unknown {
  switch (kind) {
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw invalid(name, ['true', 'false']);
    case 'number':
    case 'integer': {
      const n = raw.trim() === '' ? NaN : Number(raw);
      if (!Number.isFinite(n) || (kind === 'integer' && !Number.isInteger(n))) throw invalid(name, kind, `Query parameter '${name}' must be a number`);
      return n;
    }
    case 'timestamp': {
      const ms = parseInstant(raw);
      if (ms === undefined) throw invalid(name, 'ISO 8601 timestamp', `Query parameter '${name}' must be an ISO 8601 timestamp`);
      return ms;
    }
    default:
      return raw;
  }
}

const ISO_RE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/** An ISO 8601 instant (or a date, read as UTC midnight) in ms. */
export function parseInstant(raw: string): number | undefined {
  if (!ISO_RE.test(raw)) return undefined;
  const ms = Date.parse(raw);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Parse `expand=a.b,c` into a tree, enforcing depth, known relations and no cycles. */
export function parseExpand(raw: string | undefined, res: Resource, registry: Registry): ExpandNode {
  const root: ExpandNode = { children: new Map() };
  if (raw === undefined || raw.trim() === '') return root;
  for (const pathRaw of raw.split(',')) {
    const path = pathRaw.trim();
    if (!path) continue;
    const hops = path.split('.');
    if (hops.length > MAX_EXPAND_DEPTH) {
      throw new ProblemError('expand_too_deep', `expand '${path}' has ${hops.length} hops; at most ${MAX_EXPAND_DEPTH}`, {
        max: MAX_EXPAND_DEPTH, depth: hops.length, path,
      });
    }
    let node = root;
    let current = res;
    // Resource types along the path, with consecutive self-hops collapsed (list → dependency → list is a chain, not a cycle).
    const seen: string[] = [res.name];
    for (const hop of hops) {
      const rel = current.expand[hop];
      if (!rel) {
        throw new ProblemError('expand_unknown_relation', `'${hop}' is not an expandable relation of ${current.path}`, {
          relation: hop, resource: current.path, available: Object.keys(current.expand),
        });
      }
      if (rel.kind === 'entries') {
        // A leaf: its entries are not records, nothing expands through them.
        if (hop !== hops[hops.length - 1]) {
          throw new ProblemError('expand_unknown_relation', `'${hops[hops.indexOf(hop) + 1]}' is not an expandable relation of ${current.path}.${hop}`, {
            relation: hops[hops.indexOf(hop) + 1], resource: `${current.path}.${hop}`, available: [],
          });
        }
        if (!node.children.has(hop)) node.children.set(hop, { children: new Map() });
        break;
      }
      const target = registry.get(rel.target);
      if (seen[seen.length - 1] !== target.name) {
        if (seen.includes(target.name)) {
          throw new ProblemError('expand_cycle_detected', `expand '${path}' returns to ${target.path}`, { path });
        }
        seen.push(target.name);
      }
      let child = node.children.get(hop);
      if (!child) {
        child = { children: new Map() };
        node.children.set(hop, child);
      }
      node = child;
      current = target;
    }
  }
  return root;
}

/** Parse `fields[resource]=a,b` selectors. */
export function parseFields(params: Map<string, string>, registry: Registry): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [k, v] of params) {
    const m = /^fields\[([^\]]*)\]$/.exec(k);
    if (!m) continue;
    const res = registry.byPath.get(m[1]!);
    if (!res) {
      throw new ProblemError('invalid_field_selector', `fields[${m[1]}] names no resource`, { resource: m[1], field: null });
    }
    const set = new Set<string>();
    for (const name of v.split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!res.responseFields.has(name) && !(name in res.expand)) {
        throw new ProblemError('invalid_field_selector', `fields[${res.path}] names unknown field '${name}'`, {
          resource: res.path, field: name,
        });
      }
      set.add(name);
    }
    out.set(res.path, set);
  }
  return out;
}

function sortPlan(res: Resource, field: string, desc: boolean): SortPlan {
  if (!res.sortFields.has(field)) {
    throw new ProblemError('sort_field_invalid', `${res.path} cannot be sorted by '${field}'`, {
      field, resource: res.path, allowed: [...res.sortFields],
    });
  }
  const def = res.fields[field]!;
  return { field, column: res.columnOf[field]!, desc, nullable: def.nullable, kind: def.kind };
}

export interface ParseListOptions {
  res: Resource;
  registry: Registry;
  teamId: string;
  now: number;
  cursorSecret: Uint8Array;
  /** The calling member: personal resources (`ownedBy`) list only their rows, and cursors are bound to them. */
  memberId: string;
  /** The caller's role permissions: they widen reads of `ownerRead` rows beyond the caller's own. */
  permissions?: ReadonlySet<string>;
  /** Only the caller's own `ownerRead` rows, whatever the role (time-entry search). */
  ownRowsOnly?: boolean;
}

/** Turn a list request's query into a validated, frozen plan (spec "Standard operations" rules 3-8). */
export function parseListQuery(query: URLSearchParams, o: ParseListOptions): ParsedList {
  const { res } = o;
  const params = singleParams(query);
  const conditions: Condition[] = [];
  const fingerprint: string[] = [];
  let includeTrashed = false;
  let projectId: string | undefined;
  let none = false;
  let outsideProjects = false;
  const givenFilters = new Set<string>();

  for (const [k, v] of params) {
    if (PAGE_PARAMS.has(k) || k === 'expand' || k.startsWith('fields[')) continue;
    const lp = res.listParams?.[k];
    if (lp) {
      if (lp.values && !lp.values.includes(v)) throw invalid(k, lp.values);
      fingerprint.push(`${k}=${v}`);
      if (k === 'projectId') projectId = v;
      continue;
    }
    const m = /^([A-Za-z][A-Za-z0-9]*)\[([A-Za-z]+)\]$/.exec(k);
    const fd = m ? res.filters[m[1]!] : undefined;
    if (!m || !fd) {
      throw unknownParam(k, [...Object.keys(res.filters).map((n) => `${n}[…]`), ...Object.keys(res.listParams ?? {}), 'limit', 'cursor', 'sort', 'includeTotal', 'expand', 'fields[resource]'], res.path);
    }
    const name = m[1]!;
    const op = m[2] as FilterOp;
    if (!OPS.has(op) || !fd.ops.includes(op)) throw invalid(k, fd.ops.map((x) => `${name}[${x}]`), `${name} does not support the '${op}' operator`);
    givenFilters.add(name);
    const cond = fd.derive
      ? buildCondition(res, name, fd.derive.field, undefined, op, fd.derive.value(v, o.memberId), k)
      : buildCondition(res, name, fd.field ?? name, fd.links ?? (fd.relation ? `${res.name}.${fd.relation}` : undefined), op, v, k);
    if (fd.derive) fingerprint.push(`caller=${o.memberId}`);
    if (fd.outsideProjects && (op === 'eq' || op === 'in')) outsideProjects = true;
    if (name === 'purgeAt') includeTrashed = true;
    conditions.push(cond);
    fingerprint.push(`${k}=${v}`);
  }

  if (projectId !== undefined) {
    const field = res.listParams?.projectId?.field ?? 'projectId';
    conditions.push({ column: res.columnOf[field]!, kind: 'text', op: 'eq', value: projectId });
  }
  if (res.listParams?.scope && projectId === undefined && params.get('scope') === 'personal') none = true;
  if (res.ownedBy) {
    conditions.push({ column: res.columnOf[res.ownedBy]!, kind: 'text', op: 'eq', value: o.memberId });
    fingerprint.push(`owner=${o.memberId}`);
  }
  if (res.ownerRead && (o.ownRowsOnly || !o.permissions?.has(res.ownerRead.widenedBy))) {
    // Other members' rows are not there unless the role widens reads.
    conditions.push({ column: res.columnOf[res.ownerRead.field]!, kind: 'text', op: 'eq', value: o.memberId });
    fingerprint.push(`own=${o.memberId}`);
  }
  if (res.privateTo) {
    // Private rows of other members are not there: shared rows, or the caller's own.
    const p = res.privateTo;
    conditions.push({ any: [
      { column: res.columnOf[p.field]!, kind: res.fields[p.field]!.kind, op: 'ne', value: p.value },
      { column: res.columnOf[p.owner]!, kind: 'text', op: 'eq', value: o.memberId },
    ] });
    fingerprint.push(`private=${o.memberId}`);
  }
  if (res.membersOnly) {
    // Only rows the caller is a member of (or, judged on another row, rows without one).
    const m = res.membersOnly;
    const member: FieldCondition = { column: m.field ? res.columnOf[m.field]! : `${res.table}.id`, kind: 'text', op: 'eq', value: o.memberId, linkKind: m.links };
    conditions.push(m.field ? { any: [{ column: res.columnOf[m.field]!, kind: 'text', op: 'null', value: true }, member] } : member);
    fingerprint.push(`member=${o.memberId}`);
  }
  if (res.unlisted) {
    const u = res.unlisted;
    conditions.push({ column: res.columnOf[u.field]!, kind: 'text', op: 'ne', value: u.value });
  }
  if (res.hiddenByDefault && !givenFilters.has(res.hiddenByDefault.filter)) {
    const h = res.hiddenByDefault;
    conditions.push({ column: h.column, kind: 'boolean', op: 'eq', value: h.value });
  }

  fingerprint.sort();
  const filterKey = createHash('sha256').update(fingerprint.join('&')).digest('base64url').slice(0, 22);

  const defaultSort = projectId === undefined && res.defaultSortWithoutProject ? res.defaultSortWithoutProject : res.defaultSort;
  const page = parsePageQuery(params, { endpoint: res.path, sorts: { fields: res.sortFields, default: defaultSort, resource: res.path } }, {
    teamId: o.teamId, now: o.now, cursorSecret: o.cursorSecret, binding: filterKey,
  });
  const sort = sortPlan(res, page.sort!.field, page.sort!.desc);

  const expand = parseExpand(params.get('expand'), res, o.registry);
  const fields = parseFields(params, o.registry);
  const plan: ListPlan = {
    resource: res, conditions, includeTrashed, sort, after: page.after, limit: page.limit, includeTotal: page.includeTotal, expand, fields,
  };
  return { plan, sortKey: page.sort!.key, filterKey, projectId, none, ...(outsideProjects ? { outsideProjects } : {}) };
}

function buildCondition(res: Resource, name: string, field: string, linkKind: string | undefined, op: FilterOp, raw: string, key: string): FieldCondition {
  if (op !== 'in' && raw.length > MAX_FILTER_VALUE) {
    throw invalid(key, `a value of at most ${MAX_FILTER_VALUE} characters`, `${key} takes a value of at most ${MAX_FILTER_VALUE} characters`);
  }
  if (linkKind) {
    const values = op === 'in' ? splitList(key, raw) : raw;
    return { column: `${res.table}.id`, kind: 'text', op, value: values, linkKind };
  }
  const def = res.fields[field];
  if (!def) throw new Error(`pmapi: filter ${res.name}.${name} names unknown field ${field}`);
  const kind = def.kind;
  const column = res.columnOf[field]!;
  let value: unknown;
  switch (op) {
    case 'null':
    case 'notNull':
      if (raw !== 'true' && raw !== 'false') throw invalid(key, ['true', 'false'], `${key} takes true (or false)`);
      value = raw === 'true';
      break;
    case 'in':
      value = splitList(key, raw).map((x) => parseValue(key, kind, x));
      if (def.calendarDate) (value as string[]).forEach((x) => calendarDate(key, x));
      break;
    case 'contains':
    case 'startsWith':
      if (raw === '') throw invalid(key, 'a non-empty string', `${key} needs a non-empty value`);
      value = raw;
      break;
    default:
      value = parseValue(key, kind, raw);
      if (def.calendarDate) calendarDate(key, raw);
  }
  return { column, kind, op, value };
}

/** A filter value on a calendar-date field (`f.date`) is a real date `YYYY-MM-DD`, else 400 invalid_query_param. */
function calendarDate(key: string, raw: string): void {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
  const [y, mo, d] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1] ?? 0;
  if (!m || d < 1 || d > days) {
    throw invalid(key, 'a calendar date YYYY-MM-DD', `${key} takes a calendar date YYYY-MM-DD`);
  }
}

function splitList(key: string, raw: string): string[] {
  const items = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw invalid(key, 'a comma-separated list', `${key} needs at least one value`);
  if (items.length > MAX_IN_VALUES) throw invalid(key, `at most ${MAX_IN_VALUES} values`, `${key} takes at most ${MAX_IN_VALUES} values`);
  if (items.some((s) => s.length > MAX_FILTER_VALUE)) {
    throw invalid(key, `values of at most ${MAX_FILTER_VALUE} characters`, `${key} takes values of at most ${MAX_FILTER_VALUE} characters`);
  }
  return items;
}

/** How a single record is to be shown: expanded relations and selected fields. */
export interface ReadPlan {
  expand: ExpandNode;
  fields: Map<string, Set<string>>;
}

/** Parse the read options of a single-resource request (`expand`, `fields[...]`); anything else is refused. */
export function parseReadQuery(query: URLSearchParams, res: Resource, registry: Registry): ReadPlan {
  const params = singleParams(query);
  for (const k of params.keys()) {
    if (k !== 'expand' && !k.startsWith('fields[')) throw invalid(k, ['expand', 'fields[resource]'], `Unknown query parameter '${k}'`);
  }
  return { expand: parseExpand(params.get('expand'), res, registry), fields: parseFields(params, registry) };
}
