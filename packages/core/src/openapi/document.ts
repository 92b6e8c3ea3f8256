import type { Registry } from '../resources/registry';
import type { Resource } from '../resources/resource-spec';
import type { CustomRoute, ExtraPermissions } from '../http/routes';
import type { ScopeAction } from '../auth/scopes';
import { MAX_LIMIT, DEFAULT_LIMIT } from '../query/page';
import { MAX_EXPAND_DEPTH } from '../query/parse';
import { errorCodes } from '../errors/codes';
import { eventCatalog } from '../webhooks/catalog';
import { ANY_OBJECT, bodySchema, componentName, fromZod, pageSchema, recordSchema, ref, sharedSchemas, type JsonSchema } from './schemas';

/**
 * The OpenAPI 3.1 document of the v3 surface (issue 17, "The contract"),
 * generated from the resource declarations and the route table: every path
 * and method, its parameters, request and response schemas, the problem
 * body, the bearer scheme with the scope each operation needs, the rate-limit
 * and deprecation headers, and the webhook event payloads (`webhooks`).
 *
 * Statuses: each operation lists its success status and the error statuses
 * it can answer (each a Problem); `default` (a Problem) covers the others
 * (500 internal_error, 503 service_unavailable, …). A request matching no
 * operation is answered by a Problem (404 route_not_found, 400
 * resource_unknown, 405 method_not_allowed). docs/not-shown.md "Contract
 * and harness (issue 17)".
 */
export interface OpenApiOptions {
  registry: Registry;
  /** The custom routes, in matching order. */
  routes: readonly CustomRoute[];
  /** Role permissions a standard operation needs beyond its scope. */
  extraPermissions: ExtraPermissions;
  /** Mount point of v3 (the document's server URL); default `/api/v3`. */
  basePath?: string;
  /** info.title / info.version. */
  title?: string;
  version?: string;
}

export type OpenApiDocument = Record<string, unknown> & {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> } & Record<string, unknown>;
};

interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
  'x-required-permissions'?: string[];
}

const CODES_BY_STATUS = (() => {
  const m = new Map<number, string[]>();
  for (const [code, d] of Object.entries(errorCodes)) {
    const list = m.get(d.status) ?? [];
    list.push(code);
    m.set(d.status, list);
  }
  return m;
})();

const pascal = (s: string) => s.replace(/(^|[-_/{}])([a-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '');

const RATE_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};
const COMMON_HEADERS = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' }, ...RATE_HEADERS };
const DEPRECATION_HEADERS = { Deprecation: { $ref: '#/components/headers/Deprecation' }, Link: { $ref: '#/components/headers/Link' } };

function json(schema: JsonSchema, description: string, headers: Record<string, unknown> = COMMON_HEADERS) {
  return { description, headers, content: { 'application/json': { schema } } };
}

/** The error statuses an operation lists besides `default`. */
function errorResponses(write: boolean, relation = false): Record<string, unknown> {
  const statuses = [400, 401, 403, 404, ...(write ? [409, 413, 415, 422] : []), 429, ...(relation ? [501] : [])];
  const out: Record<string, unknown> = {};
  for (const s of statuses) out[String(s)] = { $ref: `#/components/responses/Problem${s}` };
  out.default = { $ref: '#/components/responses/ProblemDefault' };
  return out;
}

function problemResponse(status: number | 'default') {
  const codes = status === 'default' ? [] : CODES_BY_STATUS.get(status) ?? [];
  const headers: Record<string, unknown> = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
  if (status === 429) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
  else Object.assign(headers, RATE_HEADERS);
  return {
    description: status === 'default' ? 'Any other error (500 internal_error, 503 service_unavailable with Retry-After, …): a problem body.' : `A problem body; code one of ${codes.join(', ')}.`,
    headers,
    content: { 'application/json': { schema: ref('Problem') } },
  };
}

/** The path id of a resource (uuid or the id pattern) or of a custom route's `{name}`: a shared component. */
const idParam = (res?: Resource, name = 'id') => ({ $ref: `#/components/parameters/${res?.uuidIds ? 'path.uuid' : 'path'}.${name}` });

/**
 * The document's shared parameters, request bodies and responses, filled as
 * operations are built: each a component referenced by `$ref`, so a piece
 * used by many operations is written once (issue 17, document size).
 */
class Shared {
  readonly parameters: Record<string, unknown> = {};
  readonly requestBodies: Record<string, unknown> = {};
  readonly responses: Record<string, unknown> = {};
  ref(kind: 'parameters' | 'requestBodies' | 'responses', key: string, value: unknown): { $ref: string } {
    const map = this[kind];
    // Another piece under the same key (a host's resource named like a shared answer): the next free key, `{key}2`, …
    let k = key;
    for (let i = 2; k in map && !this.has(kind, k, value); i++) k = `${key}${i}`;
    map[k] ??= value;
    return { $ref: `#/components/${kind}/${k}` };
  }
  has(kind: 'parameters' | 'requestBodies' | 'responses', key: string, value: unknown): boolean {
    return key in this[kind] && JSON.stringify(this[kind][key]) === JSON.stringify(value);
  }
}

const readParams = [{ $ref: '#/components/parameters/expand' }, { $ref: '#/components/parameters/fields' }];
const idempotencyParam = { $ref: '#/components/parameters/Idempotency-Key' };

/**
 * The query parameters of a filter: one per operator, named as sent
 * (`name[contains]`), each a component: `filter.{name}.{op}` when every
 * resource means the same by it (most do: `createdAt[gt]`, `projectId[eq]`),
 * else `filter.{Resource}.{name}.{op}`.
 */
function filterParams(res: Resource, shared: Shared): unknown[] {
  const out: unknown[] = [];
  for (const [name, fd] of Object.entries(res.filters)) {
    const def = res.fields[fd.field ?? name];
    for (const op of fd.ops) {
      let schema: JsonSchema;
      if (op === 'null' || op === 'notNull') schema = { type: 'boolean' };
      else if (op === 'in') schema = { type: 'string', description: 'comma-separated values' };
      else if (def?.kind === 'boolean' && !fd.relation && !fd.links) schema = { type: 'boolean' };
      else if ((def?.kind === 'number' || def?.kind === 'integer') && !fd.relation && !fd.links) schema = { type: def.kind === 'integer' ? 'integer' : 'number' };
      else if (def?.kind === 'timestamp') schema = { type: 'string', description: 'ISO 8601 instant (or date)' };
      else schema = { type: 'string' };
      const param = { name: `${name}[${op}]`, in: 'query', schema, description: `Filter ${name} with ${op}.` };
      const common = `filter.${name}.${op}`;
      const key = !(common in shared.parameters) || shared.has('parameters', common, param) ? common : `filter.${componentName(res)}.${name}.${op}`;
      out.push(shared.ref('parameters', key, param));
    }
  }
  return out;
}

function listParams(res: Resource, shared: Shared): unknown[] {
  const sorts = [...res.sortFields].sort().flatMap((f) => [f, `-${f}`]);
  const out: unknown[] = [
    { $ref: '#/components/parameters/cursor' },
    { $ref: '#/components/parameters/limit' },
    { $ref: '#/components/parameters/includeTotal' },
    shared.ref('parameters', `sort.${componentName(res)}`, { name: 'sort', in: 'query', schema: { type: 'string', enum: sorts }, description: `Sort field, '-' for descending; default ${res.defaultSort}${res.defaultSortWithoutProject ? ` (${res.defaultSortWithoutProject} without projectId)` : ''}.` }),
    ...readParams,
  ];
  for (const [name, p] of Object.entries(res.listParams ?? {})) {
    out.push({ name, in: 'query', required: false, schema: p.values ? { type: 'string', enum: [...p.values] } : { type: 'string' } });
  }
  out.push(...filterParams(res, shared));
  return out;
}

/**
 * Build the document. Pure: the same registry and routes give the same
 * document; `createPmapi` builds it once per API (`api.openapi()`).
 */
export function openApiDocument(o: OpenApiOptions): OpenApiDocument {
  const { registry } = o;
  const basePath = (o.basePath ?? '/api/v3').replace(/\/$/, '');
  const schemas: Record<string, JsonSchema> = { ...sharedSchemas() };
  const paths: Record<string, Record<string, Operation>> = {};
  const usedIds = new Set<string>();
  const shared = new Shared();
  const records = new Set(registry.all().map(componentName));
  /** A schema many places use, as components/schemas/{key}; inline when the key holds, or a record will hold, another schema (a host resource named like it). */
  const named = (key: string, value: JsonSchema): JsonSchema => {
    if (records.has(key)) return value;
    if (!(key in schemas)) schemas[key] = value;
    return JSON.stringify(schemas[key]) === JSON.stringify(value) ? ref(key) : value;
  };
  for (const uuid of [false, true]) {
    shared.parameters[`path${uuid ? '.uuid' : ''}.id`] = { name: 'id', in: 'path', required: true, schema: uuid ? { type: 'string', format: 'uuid' } : { type: 'string', pattern: '^[0-9A-Za-z_!]+$' } };
  }
  const add = (path: string, method: string, op: Operation) => {
    let id = op.operationId;
    for (let i = 2; usedIds.has(id); i++) id = `${op.operationId}${i}`;
    usedIds.add(id);
    (paths[path] ??= {})[method.toLowerCase()] = { ...op, operationId: id };
  };
  const secured = (resource: string, action: ScopeAction, extra: readonly string[], own?: boolean) => ({
    security: [{ bearerAuth: [`${resource}:${action}`] }],
    'x-required-permissions': own ? [] : [`${resource}:${action}`, ...extra],
  });

  for (const res of registry.all()) {
    const name = componentName(res);
    schemas[name] = recordSchema(res, registry);
    const item = ref(name);
    const tags = [res.path];
    const ops = res.operations;
    const perms = (a: ScopeAction) => o.extraPermissions(res.path, a);
    const docPaths = [{ base: `/${res.path}`, deprecated: false }, ...(res.retiredPaths ?? []).map((p) => ({ base: `/${p}`, deprecated: true }))];
    for (const { base, deprecated } of docPaths) {
      const suffix = deprecated ? `Via${pascal(base)}` : '';
      const headers = deprecated ? { ...COMMON_HEADERS, ...DEPRECATION_HEADERS } : COMMON_HEADERS;
      const dep = deprecated ? { deprecated: true, description: `Retired spelling of /${res.path}: answers carry Deprecation and Link (rel="successor-version").` } : {};
      // The record, created-record and page answers: components of the resource, shared by its operations (the retired spelling adds headers: inline).
      const ok = (schema: JsonSchema, d: string, key: string) => (deprecated ? json(schema, d, headers) : shared.ref('responses', `${name}${key}`, json(schema, d, headers)));
      if (ops.list) {
        add(base, 'GET', {
          operationId: `list${name}${suffix}`, summary: `List ${res.path}`, tags, ...dep, parameters: listParams(res, shared),
          responses: { 200: ok(pageSchema(item), `A page of ${res.path}.`, 'Page'), ...errorResponses(false) }, ...secured(res.path, 'read', perms('read'), !!res.ownedBy),
        });
      }
      if (ops.create) {
        add(base, 'POST', {
          operationId: `create${name}${suffix}`, summary: `Create a ${res.name}`, tags, ...dep, parameters: [idempotencyParam, ...readParams],
          requestBody: { required: true, content: { 'application/json': { schema: named(`${name}Create`, bodySchema(res, 'create')) } } },
          responses: { 201: ok(item, `The created ${res.name}.`, 'Created'), ...errorResponses(true) }, ...secured(res.path, 'write', perms('write'), !!res.ownedBy),
        });
      }
      const one = `${base}/{id}`;
      if (ops.get) {
        add(one, 'GET', {
          operationId: `get${name}${suffix}`, summary: `Get a ${res.name}`, tags, ...dep, parameters: [idParam(res), ...readParams],
          responses: { 200: ok(item, `The ${res.name}.`, ''), ...errorResponses(false) }, ...secured(res.path, 'read', perms('read'), !!res.ownedBy),
        });
      }
      if (ops.update) {
        add(one, 'PATCH', {
          operationId: `update${name}${suffix}`, summary: `Update a ${res.name}`, tags, ...dep, parameters: [idParam(res), idempotencyParam, ...readParams],
          requestBody: { required: true, content: { 'application/json': { schema: named(`${name}Update`, bodySchema(res, 'update')) } } },
          responses: { 200: ok(item, `The ${res.name}.`, ''), ...errorResponses(true) }, ...secured(res.path, 'write', perms('write'), !!res.ownedBy),
        });
      }
      if (ops.delete) {
        add(one, 'DELETE', {
          operationId: `delete${name}${suffix}`, summary: res.revokeField ? `Revoke a ${res.name}` : `Delete a ${res.name}${res.softDelete ? ' (to the trash)' : ''}`, tags, ...dep,
          parameters: [idParam(res), idempotencyParam],
          responses: { 204: { description: 'Deleted.', headers }, ...errorResponses(true) }, ...secured(res.path, 'delete', perms('delete'), !!res.ownedBy),
        });
      }
      if (res.softDelete) {
        add(`${one}/restore`, 'POST', {
          operationId: `restore${name}${suffix}`, summary: `Restore a trashed ${res.name}`, tags, ...dep, parameters: [idParam(res), idempotencyParam, ...readParams],
          responses: { 200: ok(item, `The ${res.name}.`, ''), ...errorResponses(true) }, ...secured(res.path, 'delete', perms('delete'), !!res.ownedBy),
        });
      }
      for (const [seg, relName] of Object.entries(res.relationByPath)) {
        const rel = res.relations![relName]!;
        const idsBody = shared.ref('requestBodies', `${name}.${seg}`, {
          required: true,
          content: { 'application/json': { schema: { type: 'object', properties: { ids: { type: 'array', minItems: 1, maxItems: rel.max, items: { type: 'string', pattern: '^[0-9A-Za-z_!]+$' } } }, required: ['ids'], additionalProperties: false } } },
        });
        const relOp = (verb: string, summary: string): Operation => ({
          operationId: `${verb}${name}${pascal(seg)}${suffix}`, summary, tags, ...dep, parameters: [idParam(res), idempotencyParam, ...readParams], requestBody: idsBody,
          responses: rel.supported
            ? { 200: ok(item, `The ${res.name}.`, ''), ...errorResponses(true, true) }
            : { 501: { $ref: '#/components/responses/Problem501' }, ...errorResponses(true, true) },
          ...secured(res.path, 'write', perms('write'), !!res.ownedBy),
          ...(rel.supported ? {} : { description: `${relName} is not available on this server: 501 m2m_not_supported.` }),
        });
        add(`${one}/${seg}`, 'POST', relOp('add', `Link ${seg} to a ${res.name}`));
        add(`${one}/${seg}`, 'DELETE', relOp('remove', `Unlink ${seg} from a ${res.name}`));
        add(`${one}/${seg}/remove`, 'POST', relOp('removeVia', `Unlink ${seg} from a ${res.name} (POST form)`));
      }
    }
  }

  // Records of custom operations that the declarations do not give.
  schemas.TaskTree = registry.byName.has('task') ? recordSchema(registry.get('task'), registry, { subtasks: { type: 'array', items: ref('TaskTree') } }) : ANY_OBJECT;
  schemas.UploadSlot = {
    type: 'object',
    properties: { uploadKey: { type: 'string' }, url: { type: 'string' }, method: { const: 'PUT' }, size: { type: 'integer' }, expiresAt: { type: 'string', format: 'date-time' } },
    required: ['uploadKey', 'url', 'method', 'size', 'expiresAt'], additionalProperties: false,
  };
  schemas.WebhookTestOutcome = {
    type: 'object',
    properties: {
      delivered: { type: 'boolean' }, responseStatus: { type: ['integer', 'null'] }, durationMs: { type: 'number' }, error: { type: ['string', 'null'] },
      eventId: { type: 'string' }, eventType: { type: 'string' },
    },
    required: ['delivered', 'responseStatus', 'durationMs', 'error', 'eventId', 'eventType'], additionalProperties: false,
  };
  schemas.WebhookDelivery = {
    type: 'object',
    properties: {
      id: { type: 'string' }, webhookId: { type: 'string' }, eventType: { type: 'string' }, status: { type: 'string', enum: ['delivered', 'failed'] },
      responseStatus: { type: ['integer', 'null'] }, durationMs: { type: 'number' }, error: { type: ['string', 'null'] }, createdAt: { type: 'string', format: 'date-time' },
    },
    required: ['id', 'webhookId', 'eventType', 'status', 'responseStatus', 'durationMs', 'error', 'createdAt'], additionalProperties: false,
  };

  for (const r of o.routes) {
    const path = `/${r.path}`;
    const res = registry.byPath.get(r.path.split('/')[0]!);
    const { status, schema, description, also } = customAnswer(r, res);
    const pathParams = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => shared.ref('parameters', `path.${m[1]!}`, { name: m[1]!, in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9A-Za-z_!]+$' } }));
    const isSearch = r.method === 'GET' && /\/search$/.test(r.path);
    const query = isSearch && res
      ? [{ name: 'q', in: 'query', required: true, schema: { type: 'string', minLength: 3, maxLength: 200 } }, { $ref: '#/components/parameters/cursor' }, { $ref: '#/components/parameters/limit' }, { $ref: '#/components/parameters/includeTotal' }, ...readParams, ...filterParams(res, shared)]
      : r.method === 'GET' && r.path === 'activity' ? [{ $ref: '#/components/parameters/cursor' }, { $ref: '#/components/parameters/limit' }, { $ref: '#/components/parameters/includeTotal' }]
        : r.path.endsWith('/deliveries') ? [{ name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1 }, description: '1-100, default 25; larger clamped.' }]
          : [];
    const write = r.method !== 'GET';
    // A record answer the resource's operations already share is referenced, not repeated.
    const own = res ? componentName(res) : undefined;
    const body = json(schema, description);
    const answer = own && shared.has('responses', own, body) ? shared.ref('responses', own, body) : body;
    add(path, r.method, {
      operationId: `${r.method.toLowerCase()}${pascal(r.path)}`,
      summary: `${r.method} /${r.path}`,
      tags: [r.scope.resource],
      parameters: [...pathParams, ...(r.write ? [idempotencyParam] : []), ...query],
      ...(write && !r.noBody ? { requestBody: { required: true, content: { 'application/json': { schema: r.body ? customBody(r, registry, schemas) : ANY_OBJECT } } } } : {}),
      ...(write && r.noBody ? { description: 'Takes no body (or {}).' } : {}),
      responses: { [status]: answer, ...(also ? { [also]: answer } : {}), ...errorResponses(write) },
      ...secured(r.scope.resource, r.scope.action, r.permissions ?? [], r.ownRecords),
    });
  }

  // The two unauthenticated endpoints beside the API: health and this document.
  add('/health', 'GET', {
    operationId: 'getHealth', summary: 'Health: one round trip to the store', tags: ['meta'], security: [],
    responses: {
      200: json({ type: 'object', properties: { status: { const: 'ok' } }, required: ['status'], additionalProperties: false }, 'The store answered.', {}),
      503: json({ type: 'object', properties: { status: { const: 'unavailable' } }, required: ['status'], additionalProperties: false }, 'The store did not answer (Retry-After: 1).', {}),
    },
  });
  add('/openapi.json', 'GET', {
    operationId: 'getOpenApiDocument', summary: 'This document', tags: ['meta'], security: [],
    responses: {
      200: { description: 'The OpenAPI 3.1 document, with an ETag.', headers: { ETag: { schema: { type: 'string' } } }, content: { 'application/json': { schema: { ...ANY_OBJECT, required: ['openapi', 'info', 'paths'] } } } },
      304: { description: 'Not modified (If-None-Match matched the ETag).' },
    },
  });

  // Webhook event payloads: one entry per catalog name.
  const webhooks: Record<string, unknown> = {};
  const catalog = eventCatalog(registry);
  const kindOf = (event: string) => (catalog.operation.includes(event) ? 'operation' : catalog.membership.includes(event) ? 'membership' : 'lifecycle');
  for (const event of catalog.all) {
    const resName = event.split('.')[0]!;
    const target = registry.byName.get(resName);
    const kind = kindOf(event);
    // One payload schema per resource and kind (its created, updated, … events carry the same), one for every membership event.
    const payload: JsonSchema = kind === 'membership'
      ? named('MembershipEventPayload', { type: 'object', properties: { parentId: { type: 'string' }, relatedId: { type: 'string' }, relation: { type: 'string' } }, required: ['parentId', 'relatedId', 'relation'] })
      : kind === 'lifecycle' && target
        ? named(`${componentName(target)}EventPayload`, { type: 'object', properties: { [resName]: ref(componentName(target)) }, required: [resName] })
        : { type: 'object', properties: { [resName]: ANY_OBJECT }, required: [resName] };
    webhooks[event] = {
      post: {
        operationId: `event${pascal(event.replace(/\./g, '-'))}`,
        summary: `${event} (${kind})`,
        parameters: [
          { $ref: '#/components/parameters/X-Webhook-Id' },
          { name: 'X-Webhook-Event', in: 'header', required: true, schema: { type: 'string', const: event } },
          { $ref: '#/components/parameters/X-Webhook-Delivery-Id' },
          { $ref: '#/components/parameters/X-Webhook-Signature' },
          { $ref: '#/components/parameters/X-Api-Version' },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { allOf: [ref('EventEnvelope'), { type: 'object', properties: { type: { const: event }, payload } }] } } },
        },
        responses: { '2XX': shared.ref('responses', 'WebhookAck', { description: 'Any 2xx acknowledges the delivery; anything else (or a timeout of 10 s) is a failure, retried up to 3 times.' }) },
      },
    };
  }

  const responses: Record<string, unknown> = { ...shared.responses, ProblemDefault: problemResponse('default') };
  // The write schemas' ids and instants, repeated in every body and parameter: one component each.
  shareSchemas({ paths, webhooks, parameters: shared.parameters, requestBodies: shared.requestBodies, responses }, schemas);
  for (const s of [400, 401, 403, 404, 409, 413, 415, 422, 429, 501]) responses[`Problem${s}`] = problemResponse(s);

  return {
    openapi: '3.1.0',
    info: {
      title: o.title ?? 'pmapi v3',
      version: o.version ?? '3',
      description: 'The v3 REST surface, generated from the resource declarations. Clients must ignore response keys they do not recognise (records of this document list every key the server writes). '
        + 'A request matching no operation below is answered with a problem body (404 route_not_found, 400 resource_unknown, 405 method_not_allowed with Allow).',
    },
    servers: [{ url: basePath }],
    security: [{ bearerAuth: [] }],
    tags: [...registry.all().map((r) => ({ name: r.path })), { name: 'meta', description: 'Unauthenticated endpoints beside the API.' }],
    paths,
    webhooks,
    components: {
      schemas,
      responses,
      ...(Object.keys(shared.requestBodies).length ? { requestBodies: shared.requestBodies } : {}),
      parameters: {
        ...shared.parameters,
        cursor: { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: 'The nextCursor of the previous page.' },
        limit: { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1 }, description: `Page size 1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}; larger is clamped.` },
        includeTotal: { name: 'includeTotal', in: 'query', required: false, schema: { type: 'boolean' }, description: 'Add total to the envelope.' },
        expand: { name: 'expand', in: 'query', required: false, schema: { type: 'string' }, description: `Comma-separated relation paths (a.b), at most ${MAX_EXPAND_DEPTH} hops; each replaces the id (or id array) with the record(s).` },
        fields: {
          name: 'fields', in: 'query', required: false, style: 'deepObject', explode: true,
          schema: { type: 'object', additionalProperties: { type: 'string' } },
          description: 'fields[resource]=a,b: records of that resource carry only id and the named fields.',
        },
        'X-Webhook-Id': { name: 'X-Webhook-Id', in: 'header', required: true, schema: { type: 'string' }, description: 'The webhook registration.' },
        'X-Webhook-Delivery-Id': { name: 'X-Webhook-Delivery-Id', in: 'header', required: true, schema: { type: 'string' }, description: '{webhookId}:{eventId}, identical on every retry.' },
        'X-Webhook-Signature': {
          name: 'X-Webhook-Signature', in: 'header', required: true, schema: { type: 'string', pattern: '^t=\\d+,v1=[0-9a-f]{64}$' },
          description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the webhook secret>; reject a t more than 300 s off.',
        },
        'X-Api-Version': { name: 'X-Api-Version', in: 'header', required: true, schema: { type: 'string' }, description: "The webhook's apiVersion." },
        'Idempotency-Key': { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 250 }, description: 'Replays the first answer for 10 minutes; another body with the same key: 422.' },
      },
      headers: {
        'X-Request-Id': { description: 'The request id (echoed when the request sent a valid one).', schema: { type: 'string' } },
        'X-RateLimit-Limit': { description: 'Requests allowed in the window (admitted requests, when rate limits are on).', schema: { type: 'integer' } },
        'X-RateLimit-Remaining': { description: 'Requests left in the window.', schema: { type: 'integer' } },
        'X-RateLimit-Reset': { description: 'Seconds to the window reset.', schema: { type: 'integer' } },
        'Retry-After': { description: 'Seconds to wait (429; equals the body retryAfter).', schema: { type: 'integer' } },
        Deprecation: { description: 'true on a retired path spelling.', schema: { type: 'string' } },
        Link: { description: 'The successor path (rel="successor-version").', schema: { type: 'string' } },
      },
      securitySchemes: {
        bearerAuth: {
          type: 'http', scheme: 'bearer',
          description: 'A personal access token or OAuth access token. The security requirement of each operation names the scope it needs; x-required-permissions lists the role permissions as well.',
        },
      },
    },
  };
}

const ID_SCHEMA = JSON.stringify({ type: 'string', maxLength: 64, pattern: '^[0-9A-Za-z_!]+$' });

/**
 * Replace, in place, every schema node that is the write schemas' id
 * (`Id`) or a zod instant (`type: string, format: date-time` with its
 * pattern: `DateTime`, `DateTime2`, … one per distinct pattern) with a
 * `$ref` to a component holding it: the same schema, written once.
 */
function shareSchemas(root: Record<string, unknown>, schemas: Record<string, JsonSchema>): void {
  const instants = new Map<string, string>();
  const swap = (node: Record<string, unknown>): Record<string, unknown> | undefined => {
    const keys = Object.keys(node);
    if (keys.length === 3 && JSON.stringify(node) === ID_SCHEMA) {
      schemas.Id ??= JSON.parse(ID_SCHEMA) as JsonSchema;
      return ref('Id');
    }
    if (keys.length === 3 && node.type === 'string' && node.format === 'date-time' && typeof node.pattern === 'string') {
      let name = instants.get(node.pattern);
      if (!name) {
        name = instants.size ? `DateTime${instants.size + 1}` : 'DateTime';
        instants.set(node.pattern, name);
        schemas[name] = { type: 'string', format: 'date-time', pattern: node.pattern, description: 'An ISO 8601 instant with its offset (Z or ±hh:mm).' };
      }
      return ref(name);
    }
    return undefined;
  };
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        const r = x && typeof x === 'object' && !Array.isArray(x) ? swap(x as Record<string, unknown>) : undefined;
        if (r) v[i] = r;
        else walk(x);
      });
    } else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      for (const [k, x] of Object.entries(o)) {
        const r = x && typeof x === 'object' && !Array.isArray(x) && k !== 'properties' ? swap(x as Record<string, unknown>) : undefined;
        if (r) o[k] = r;
        else walk(x);
      }
    }
  };
  walk(root);
  for (const s of Object.values(schemas)) walk(s);
}

/**
 * The request body a custom route declares: its zod schema as JSON Schema
 * (what the handler parses, `io: 'input'`), or a resource's create body with
 * a nested array of nodes of the same shape (a component, `{Name}TreeNode`,
 * since it refers to itself).
 */
function customBody(r: CustomRoute, registry: Registry, schemas: Record<string, JsonSchema>): JsonSchema {
  const b = r.body!;
  if ('_zod' in b) return fromZod(b, 'input');
  const { create, nested } = b;
  const res = registry.get(create);
  const node = `${componentName(res)}TreeNode`;
  const base = bodySchema(res, 'create');
  schemas[node] ??= {
    ...base,
    description: `A ${res.name}'s create body, plus ${nested}: nodes of the same shape, created under it (a nested node takes its place from the tree).`,
    properties: { ...(base.properties as Record<string, JsonSchema>), [nested]: { type: 'array', items: { $ref: `#/components/schemas/${node}` } } },
  };
  return ref(node);
}

/** What a custom route answers on success (`res`: the resource its path starts with, if any). */
function customAnswer(r: CustomRoute, res: Resource | undefined): { status: number; schema: JsonSchema; description: string; also?: number } {
  const item = res ? ref(componentName(res)) : ANY_OBJECT;
  if (r.method === 'GET' && r.path.endsWith('/search')) return { status: 200, schema: pageSchema(item), description: 'A page of matches, best first.' };
  if (r.path === 'activity') return { status: 200, schema: pageSchema(ref('EventEnvelope'), { extra: { totalCapped: { const: true } } }), description: 'A page of the activity feed.' };
  if (r.path === 'webhooks/{id}/deliveries') return { status: 200, schema: pageSchema(ref('WebhookDelivery'), { cursor: false, total: false }), description: 'The delivery log, newest first.' };
  if (r.path === 'webhooks/{id}/test') return { status: 200, schema: ref('WebhookTestOutcome'), description: 'The outcome of the one test attempt.' };
  if (r.path === 'files/upload-url') return { status: 200, schema: ref('UploadSlot'), description: 'Where to PUT the bytes, and the uploadKey to register them with.' };
  if (r.path === 'chats/self') return { status: 200, also: 201, schema: item, description: "The caller's own chat: 201 when this call created it, else 200." };
  if (r.path === 'tasks/tree') return { status: 201, schema: ref('TaskTree'), description: 'The root task with its created subtasks, recursively.' };
  if (r.path === 'files/from-content' || r.path === 'files/from-url') return { status: 201, schema: item, description: 'The created file.' };
  if (/^tasks\/\{id\}\/(attach|detach)-document$/.test(r.path)) return { status: 200, schema: item, description: 'The task.' };
  if (res) return { status: 200, schema: item, description: `The ${res.name}.` };
  return { status: 200, schema: {}, description: 'The answer.' };
}
