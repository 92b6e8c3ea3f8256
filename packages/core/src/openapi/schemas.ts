import { z } from 'zod';
import type { FieldDef } from '../resources/fields';
import type { Resource } from '../resources/resource-spec';
import type { Registry } from '../resources/registry';
import { v3Shape } from '../presenters/v3';
import { MAX_FIELD_ERRORS } from '../errors/problem';

/** A JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) as plain data. */
export type JsonSchema = Record<string, unknown>;

/**
 * Schema names the document gives its own pieces (sharedSchemas, the custom operations' answers and bodies, the
 * membership payload, the shared id and instants): a host resource whose record would take one is `{Name}Record`,
 * so neither replaces the other.
 */
const OWN_SCHEMA = /^(?:Ignored|FieldError|Problem|EventEnvelope|TaskTree|TaskTreeNode|UploadSlot|WebhookTestOutcome|WebhookDelivery|MembershipEventPayload|Id|DateTime\d*)$/;

/** The component name of a resource's record: `checklistItem` → `ChecklistItem` (`problem` → `ProblemRecord`: see OWN_SCHEMA). */
export function componentName(res: Resource): string {
  const name = res.name.charAt(0).toUpperCase() + res.name.slice(1);
  return OWN_SCHEMA.test(name) ? `${name}Record` : name;
}

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/**
 * An object whose keys the document does not list. `additionalProperties: true` is JSON Schema's default,
 * spelled out because client generators read a bare `{ type: 'object' }` as an object with no keys at all
 * (openapi-typescript: `Record<string, never>`), so a typed client could read nothing of it.
 */
export const ANY_OBJECT: JsonSchema = { type: 'object', additionalProperties: true };

export function orNull(s: JsonSchema): JsonSchema {
  if (typeof s.type === 'string' && Object.keys(s).every((k) => k === 'type' || k === 'format' || k === 'enum' || k === 'description')) {
    const out: JsonSchema = { ...s, type: [s.type, 'null'] };
    if (Array.isArray(s.enum)) out.enum = [...s.enum, null];
    return out;
  }
  return { anyOf: [s, { type: 'null' }] };
}

/**
 * A string trimmed before its length checks (`z.string().trim().max(n)`, an
 * overwrite check) takes a longer value as sent: its maxLength holds after
 * trimming, so the input schema states it in words, not as `maxLength`.
 */
function trimmedInput(ctx: { zodSchema: unknown; jsonSchema: JsonSchema }): void {
  const checks = (ctx.zodSchema as { _zod?: { def?: { checks?: { _zod?: { def?: { check?: string } } }[] } } })._zod?.def?.checks ?? [];
  if (typeof ctx.jsonSchema.maxLength !== 'number' || !checks.some((c) => c._zod?.def?.check === 'overwrite')) return;
  ctx.jsonSchema.description = `At most ${ctx.jsonSchema.maxLength} characters once trimmed.`;
  delete ctx.jsonSchema.maxLength;
}

/** A zod schema as JSON Schema (no `$schema` key); `{}` (any value) where zod cannot say. */
export function fromZod(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  try {
    const { $schema: _s, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', override: io === 'input' ? trimmedInput : undefined }) as JsonSchema;
    return rest;
  } catch {
    return {};
  }
}

/** The closed value set of a text field, when its write schema is a zod enum (possibly nullable). */
function enumValues(def: FieldDef): string[] | undefined {
  if (!def.schema) return undefined;
  const js = fromZod(def.schema, 'output');
  const pick = (s: JsonSchema): string[] | undefined => (Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string') ? (s.enum as string[]) : undefined);
  if (pick(js)) return pick(js);
  if (Array.isArray(js.anyOf)) for (const a of js.anyOf as JsonSchema[]) if (pick(a)) return pick(a);
  return undefined;
}

/**
 * How a response shows one stored field (presenters/v3.ts): timestamps as
 * ISO 8601 strings, numbers and booleans as themselves, relation sets as id
 * arrays, JSON values as their write schema describes them (read-only JSON:
 * any value). Text is a string (of the write schema's enum, when it has one):
 * lengths and patterns are write rules, not promises about stored data.
 */
export function responseFieldSchema(def: FieldDef): JsonSchema {
  let s: JsonSchema;
  if (def.relation) s = { type: 'array', items: { type: 'string' } };
  else {
    switch (def.kind) {
      case 'timestamp':
        s = { type: 'string', format: 'date-time' };
        break;
      case 'integer':
        s = { type: 'integer' };
        break;
      case 'number':
        s = { type: 'number' };
        break;
      case 'boolean':
        s = { type: 'boolean' };
        break;
      case 'json':
        // The write schema's shape and types; objects stay open: presenters add keys (a widget's position).
        s = def.schema ? openObjects(stripNull(fromZod(def.schema, 'output'))) : {};
        break;
      default: {
        const values = enumValues(def);
        s = values ? { type: 'string', enum: values } : { type: 'string' };
        if (def.calendarDate) s = { type: 'string', format: 'date' };
      }
    }
  }
  return def.nullable ? orNull(s) : s;
}

/** A schema with every `additionalProperties: false` dropped (recursively). */
function openObjects(s: unknown): any {
  if (Array.isArray(s)) return s.map(openObjects);
  if (s === null || typeof s !== 'object') return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) if (!(k === 'additionalProperties' && v === false)) out[k] = openObjects(v);
  return out;
}

/** A write schema made nullable by the field builder: its non-null branch (nullability is added back from `nullable`). */
function stripNull(s: JsonSchema): JsonSchema {
  if (Array.isArray(s.anyOf)) {
    const rest = (s.anyOf as JsonSchema[]).filter((a) => a.type !== 'null');
    if (rest.length === 1 && Object.keys(s).length === 1) return rest[0]!;
  }
  return s;
}

/**
 * Response fields computed by a resource's hooks (`extraResponseFields`,
 * `present`, `decorateGet`) and the once-only fields of `reveal`: what the
 * declarations do not type. Keyed `resource.field`. A computed field not
 * listed here is documented as any value, and its record stays open
 * (`additionalProperties` allowed).
 */
export const COMPUTED_FIELDS: Record<string, { schema: JsonSchema; description: string }> = {
  'document.body': { schema: { type: 'string' }, description: 'The document body; only a single GET carries it.' },
  'file.url': { schema: { type: 'string' }, description: 'Time-limited download URL (inline).' },
  'file.download': { schema: { type: 'string' }, description: 'Time-limited download URL (attachment).' },
  'file.thumbnail': { schema: { type: ['string', 'null'] }, description: 'Time-limited preview URL; null for non-images and until processed.' },
  'personalAccessToken.status': { schema: { type: 'string', enum: ['active', 'expired', 'revoked'] }, description: 'Derived state of the token.' },
  'personalAccessToken.token': { schema: { type: 'string' }, description: 'The secret token; in the create answer only.' },
  'presenceStatus.expired': { schema: { type: 'boolean' }, description: 'True once `until` has passed.' },
  'project.defaultStatusId': { schema: { type: ['string', 'null'] }, description: "The first active status column; only a single GET carries it." },
  'webhook.secret': { schema: { type: 'string' }, description: 'The signing secret; in the create and rotate-secret answers only.' },
};

/** Built-in resources whose `present` hook only rewrites declared fields (a built-in role's effective permissions). */
const HOOKS_ADD_NO_KEY = new Set(['role']);

/** Fields a resource's `reveal` hook adds to its create answer (by resource name). */
const REVEALED: Record<string, string[]> = { personalAccessToken: ['token'], webhook: ['secret'] };

/**
 * The record schema of a resource: every field of its v3 shape required
 * (the presenter always writes each, null when empty), computed fields
 * optional, every expand target an optional property (an expand replaces
 * a relation's id array with records, so such a property takes either),
 * and no other key where the presenter guarantees it. `extra` adds
 * properties (the task tree's `subtasks`).
 */
export function recordSchema(res: Resource, registry: Registry, extra: Record<string, JsonSchema> = {}): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const o of v3Shape(res)) {
    properties[o.name] = responseFieldSchema(res.fields[o.name]!);
    required.push(o.name);
  }
  let closed = true;
  const computed = [...(res.extraResponseFields ?? []), ...(REVEALED[res.name] ?? [])];
  for (const name of computed) {
    const known = COMPUTED_FIELDS[`${res.name}.${name}`];
    if (!known) closed = false;
    properties[name] = known ? { ...known.schema, description: known.description } : {};
  }
  const hooks = res.hooks ?? {};
  // A hook may add keys nobody declared: the record stays open unless its hooks are known (typed above, or adding no key).
  if ((hooks.present || hooks.decorateGet || hooks.reveal) && !HOOKS_ADD_NO_KEY.has(res.name) && !Object.keys(COMPUTED_FIELDS).some((k) => k.startsWith(`${res.name}.`))) closed = false;
  for (const [name, e] of Object.entries(res.expand)) {
    let s: JsonSchema;
    if (e.kind === 'entries') s = { type: 'array', items: ANY_OBJECT, description: `expand=${name}: computed entries.` };
    else {
      const target = registry.byName.get(e.target);
      const item = target ? ref(componentName(target)) : ANY_OBJECT;
      s = e.kind === 'one'
        ? { anyOf: [item, { type: 'null' }], description: `expand=${name}: the ${e.target} (null when missing or not visible).` }
        : { type: 'array', items: item, description: `expand=${name}: the linked ${e.target} records.` };
    }
    properties[name] = properties[name] ? { anyOf: [properties[name]!, s] } : s;
  }
  Object.assign(properties, extra);
  return {
    type: 'object',
    description: `A ${res.name} record. With fields[${res.path}], only id and the named fields are present.`,
    properties,
    required,
    ...(closed ? { additionalProperties: false } : {}),
  };
}

/**
 * The request body of a create or update: the writable fields with their
 * write schemas (create: `rw` and `createOnly`; update: `rw` and
 * `updateOnly`, plus `expectedUpdatedAt`), required ones required on create.
 */
export function bodySchema(res: Resource, op: 'create' | 'update'): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  // What prepareBody (services/body.ts) does with each key: server-assigned fields, computed ones and, on create,
  // update-only ones are accepted and ignored (spec "Standard operations" rule 1), so they are listed as such, any value.
  const ignored = ref('Ignored');
  for (const [key, def] of Object.entries(res.fields)) {
    if (def.mode === 'readOnly' || !def.schema || (op === 'create' && def.mode === 'updateOnly')) {
      properties[key] = ignored;
      continue;
    }
    properties[key] = fromZod(def.schema, 'input');
    if (def.writeOnly) properties[key] = { ...properties[key], writeOnly: true };
    if (op === 'create' && def.required) required.push(key);
  }
  for (const key of res.extraResponseFields ?? []) properties[key] ??= ignored;
  // A retired field name still accepted: the current field's rule (the current name wins when both are sent).
  for (const [old, current] of Object.entries(res.retiredFieldNames)) {
    if (properties[current] && !(old in properties)) properties[old] = { ...properties[current], deprecated: true, description: `Retired name of ${current}.` };
  }
  if (op === 'update') {
    properties.expectedUpdatedAt = { type: 'string', format: 'date-time', description: 'The updatedAt you last read: 409 stale_write when the record changed since.' };
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** The shared components: the problem body, its field errors, the envelope parts. */
export function sharedSchemas(): Record<string, JsonSchema> {
  return {
    Ignored: {
      readOnly: true,
      description: 'A key a request body may carry that the server ignores (spec "Standard operations" rule 1): a server-assigned or computed field, or, on create, a field set by an update only.',
    },
    FieldError: {
      type: 'object',
      properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
      required: ['field', 'code', 'message'],
    },
    Problem: {
      type: 'object',
      description: 'An RFC 7807 problem body (application/json). Extra fields of a code sit at the top level; branch on `code`.',
      properties: {
        type: { type: 'string', description: 'Same as code.' },
        title: { type: 'string' },
        status: { type: 'integer', minimum: 400, maximum: 599 },
        detail: { type: 'string' },
        instance: { type: 'string', description: 'The request path.' },
        code: { type: 'string' },
        requestId: { type: 'string' },
        docsUrl: { type: 'string' },
        errors: { type: 'array', maxItems: MAX_FIELD_ERRORS, items: ref('FieldError'), description: 'validation_failed: the field errors.' },
        errorsOmitted: { type: 'integer', minimum: 1, description: 'How many field errors were left out of `errors`.' },
      },
      required: ['type', 'title', 'status', 'detail', 'instance', 'code', 'requestId', 'docsUrl'],
    },
    EventEnvelope: {
      type: 'object',
      description: 'A webhook delivery body and an activity feed entry.',
      properties: {
        eventId: { type: 'string' },
        type: { type: 'string' },
        aggregateType: { type: 'string' },
        aggregateId: { type: 'string' },
        teamId: { type: 'string' },
        projectId: { type: ['string', 'null'] },
        triggeredBy: {
          type: 'object',
          properties: { source: { type: 'string', enum: ['human', 'agent', 'system'] }, userId: { type: 'string' }, teamMemberId: { type: 'string' }, agentId: { type: 'string' } },
          required: ['source'],
        },
        timestamp: { type: 'string', format: 'date-time' },
        payload: ANY_OBJECT,
      },
      required: ['eventId', 'type', 'aggregateType', 'aggregateId', 'teamId', 'projectId', 'triggeredBy', 'timestamp', 'payload'],
    },
  };
}

/** The v3 list envelope (presenters/v3.ts v3Page) around items of `item`. */
export function pageSchema(item: JsonSchema, o: { cursor?: boolean; total?: boolean; extra?: Record<string, JsonSchema> } = {}): JsonSchema {
  const cursor = o.cursor ?? true;
  return {
    type: 'object',
    properties: {
      data: { type: 'array', items: item },
      ...(o.total === false ? {} : { total: { type: 'integer', minimum: 0, description: 'Present only with includeTotal=true.' } }),
      limit: { type: 'integer', minimum: 1 },
      hasMore: { type: 'boolean' },
      ...(cursor ? { nextCursor: { type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last.' } } : {}),
      ...(o.extra ?? {}),
    },
    required: ['data', 'limit', 'hasMore', ...(cursor ? ['nextCursor'] : [])],
    additionalProperties: false,
  };
}
