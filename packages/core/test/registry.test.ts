import { describe, it, expect, expectTypeOf } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { builtinResources, builtinRolePermissions, defineResource, errorCodes, f, Registry, requiredPermissions, v3, v3Shape, type RecordOf } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { tableOf } from '@pmapi/core/sql';
import { sql } from 'kysely';

// The spec's error table, kept in the repository as data (tests read nothing outside it).
const specCodesPath = fileURLToPath(new URL('./fixtures/spec-error-codes.json', import.meta.url));
const notShownPath = fileURLToPath(new URL('../../../docs/not-shown.md', import.meta.url));

describe('resource registry: every declaration is complete and consistent', () => {
  const registry = new Registry(builtinResources);

  it('every resource has its table with every declared column', async () => {
    const store = await openSqliteStore();
    try {
      for (const res of builtinResources) {
        const cols = res.columns.map((c) => c.column);
        // Selecting every column fails if the table or any column is missing.
        await expect(store.db.selectFrom(res.table).select(cols).limit(0).execute(), `${res.name}`).resolves.toEqual([]);
      }
    } finally {
      await store.close();
    }
  });

  it('filters, sorts, expands and relations point at real fields and resources', () => {
    for (const res of builtinResources) {
      for (const [name, f] of Object.entries(res.filters)) {
        if (f.derive) expect(res.columnOf[f.derive.field], `${res.name} filter ${name}: derived onto a stored field`).toBeDefined();
        else if (f.links) expect(f.links.startsWith(`${res.name}.`) && !res.relations?.[f.links.slice(res.name.length + 1)], `${res.name} filter ${name}: links of its own, not a relation's`).toBe(true);
        else if (f.relation) expect(res.relations?.[f.relation], `${res.name}.${name}`).toBeDefined();
        else expect(res.columnOf[f.field ?? name], `${res.name} filter ${name}`).toBeDefined();
      }
      for (const s of res.sortFields) expect(res.columnOf[s], `${res.name} sort ${s}`).toBeDefined();
      for (const [name, e] of Object.entries(res.expand)) {
        if (e.kind === 'entries') continue;
        const target = registry.get(e.target);
        if (e.kind === 'one') expect(res.columnOf[e.field], `${res.name} expand ${name}`).toBeDefined();
        if (e.kind === 'many') expect(res.relations?.[e.relation], `${res.name} expand ${name}`).toBeDefined();
        if (e.kind === 'children') expect(target.columnOf[e.field], `${res.name} expand ${name}`).toBeDefined();
      }
      for (const [name, rel] of Object.entries(res.relations ?? {})) {
        if (rel.supported) expect(registry.byName.has(rel.target), `${res.name} relation ${name}`).toBe(true);
      }
    }
  });

  it('scope names are kebab-case plurals and event names camelCase singulars', () => {
    for (const res of builtinResources) {
      expect(res.path).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(res.name).toMatch(/^[a-z][A-Za-z]*$/);
    }
  });
});

describe('v3 Errors: one registry, matching the spec', () => {
  const documented = (JSON.parse(readFileSync(specCodesPath, 'utf8')) as { codes: Array<{ code: string; status: number }> }).codes;

  it('every code of the spec table exists with its status', () => {
    expect(documented.length).toBeGreaterThan(50);
    for (const { code, status } of documented) {
      expect(errorCodes, code).toHaveProperty(code);
      expect((errorCodes as Record<string, { status: number }>)[code]!.status, code).toBe(status);
    }
  });

  it('every code of ours the spec does not name is marked notShown and written down in docs/not-shown.md', () => {
    const names = new Set(documented.map((d) => d.code));
    const notShown = readFileSync(notShownPath, 'utf8');
    for (const [code, def] of Object.entries(errorCodes)) {
      if (names.has(code)) continue;
      expect((def as { notShown?: boolean }).notShown, code).toBe(true);
      expect(notShown, code).toContain(`\`${code}\``);
    }
  });
});

describe('resource registry: policy and project scoping are declared, not written into generic code', () => {
  const src = fileURLToPath(new URL('../src/', import.meta.url));
  const generic = ['services', 'query', 'http', 'sql', 'auth', 'routes'];

  it('no generic file branches on a resource name', () => {
    for (const dir of generic) {
      for (const file of readdirSync(`${src}${dir}`).filter((f) => f.endsWith('.ts'))) {
        const text = readFileSync(`${src}${dir}/${file}`, 'utf8');
        expect(text, `${dir}/${file}`).not.toMatch(/\b(?:res|resource|target|r)\.(?:name|path|table) === '/);
        // Per-resource lists (which roles hold what) belong in the declarations.
        const paths = builtinResources.map((r) => r.path).join('|');
        expect(text, `${dir}/${file}`).not.toMatch(new RegExp(`\\[\\s*'(?:${paths})',`));
      }
    }
  });

  it('resource files hold no SQL and no dialect encoding: hooks read through field-name helpers (SQL lives under sql/)', () => {
    for (const file of readdirSync(`${src}resources`).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(`${src}resources/${file}`, 'utf8');
      expect(text, file).not.toMatch(/\.dialect\b|execShaped|ctx\.db\.|\.selectFrom\(|\.updateTable\(|\.deleteFrom\(|\.insertInto\(|sql`/);
    }
  });

  it('layers: sql/ imports nothing above it, and the declarations take their hook context from resources/ itself', () => {
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(`${dir}${e.name}/`) : e.name.endsWith('.ts') ? [`${dir}${e.name}`] : []);
    for (const file of files(`${src}sql/`)) {
      // A migration creates a resource's table from its declaration (tableOf), so it may import declaration files, and nothing else above.
      const text = file.includes('/sql/migrations/') ? readFileSync(file, 'utf8').replace(/from '\.\.\/\.\.\/resources\/[a-z-]+\.resource'/g, '') : readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/from '(?:\.\.\/)+(?:resources|services|query|http|routes|auth|oauth|admin|presenters)\//);
    }
    for (const file of files(`${src}resources/`)) {
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/import type \{[^}]*\} from '\.\.\/services\/context'/);
    }
    expect(readFileSync(`${src}presenters/v3.ts`, 'utf8')).not.toMatch(/from '\.\.\/services\//);
  });

  it('the statement cache is private to sql/', () => {
    const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (e.name === 'sql' && dir === src ? [] : walk(`${dir}${e.name}/`)) : e.name.endsWith('.ts') ? [`${dir}${e.name}`] : []);
    for (const file of walk(src)) expect(readFileSync(file, 'utf8'), file).not.toMatch(/statement-cache|runCached|execShaped/);
  });

  it('SQL lives in sql/: no kysely statement is built outside it', () => {
    const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (e.name === 'sql' && dir === src ? [] : walk(`${dir}${e.name}/`)) : e.name.endsWith('.ts') ? [`${dir}${e.name}`] : []);
    const files = walk(src);
    expect(files.length).toBeGreaterThan(50);
    for (const file of files) {
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/\.selectFrom\(|\.insertInto\(|\.updateTable\(|\.deleteFrom\(|sql`/);
    }
  });

  it('built-in roles follow each declaration: a new resource states what regular and client hold', () => {
    const widget = defineResource({
      name: 'widget', path: 'widgets', table: 'widgets', softDelete: false, operations: { list: true },
      fields: {}, filters: {}, defaultSort: 'createdAt', expand: {},
      policy: { regular: ['read'], client: ['read'], requires: { write: ['manageWidgets'] } },
    });
    const quiet = defineResource({
      name: 'gadget', path: 'gadgets', table: 'gadgets', softDelete: false, operations: { list: true },
      fields: {}, filters: {}, defaultSort: 'createdAt', expand: {},
    });
    const registry = new Registry([...builtinResources, widget, quiet]);
    expect(builtinRolePermissions('regular', registry)).toEqual(expect.arrayContaining(['widgets:read', 'gadgets:read', 'gadgets:write']));
    expect(builtinRolePermissions('regular', registry)).not.toContain('widgets:write');
    expect(builtinRolePermissions('client', registry)).toContain('widgets:read');
    expect(builtinRolePermissions('client', registry).filter((p) => p.startsWith('gadgets:'))).toEqual([]);
    expect(builtinRolePermissions('owner', registry)).toEqual(expect.arrayContaining(['widgets:delete', 'gadgets:delete', 'manageWebhooks']));
    expect(requiredPermissions(registry, 'widgets', 'write')).toEqual(['manageWidgets']);
    expect(requiredPermissions(registry, 'webhooks', 'delete')).toEqual(['manageWebhooks']);
    expect(requiredPermissions(registry, 'webhooks', 'read')).toEqual([]);
  });

  it('a resource may not hide another or a path the API serves itself: createPmapi refuses it (a resource named like a built-in replaces it)', async () => {
    const at = (name: string, path: string) => defineResource({
      name, path, table: `${name}s`, softDelete: false, operations: { list: true },
      fields: {}, filters: {}, defaultSort: 'createdAt', expand: {},
    });
    for (const [resource, message] of [
      [at('page', 'errors'), /resource 'page' takes the path 'errors', which the API serves itself/],
      [at('doc', 'openapi.json'), /which the API serves itself/],
      [at('feed', 'activity'), /resource 'feed' takes the path 'activity', which the API serves itself/],
      [at('widget', 'tasks'), /resource 'widget' takes the path 'tasks', which resource 'task' has/],
    ] as const) {
      const store = await openSqliteStore();
      try {
        await expect(import('@pmapi/core').then((m) => m.createPmapi({ store, resources: [resource] }))).rejects.toThrow(message);
      } finally {
        await store.close();
      }
    }
  });

  it('the project and the rows of projects declare how project access applies', () => {
    const registry = new Registry(builtinResources);
    expect(registry.get('project').projectKey).toBe('id');
    for (const name of ['task', 'list', 'status']) expect(registry.get(name).projectKey, name).toBe('projectId');
    for (const name of ['portfolio', 'label', 'webhook', 'role']) expect(registry.get(name).projectKey, name).toBeUndefined();
  });
});

describe('defineResource: what a declaration implies', () => {
  it('table, operations, actor expands, reference expands and relations are derived', () => {
    const note = defineResource({
      name: 'meetingNote', path: 'meeting-notes', softDelete: true,
      fields: {
        title: f.string({ max: 100 }),
        projectId: f.ref('project'),
        parentNoteId: f.ref('meetingNote', { nullable: true }),
        attendees: f.refs('attendees', { target: 'member' }),
      },
      filters: {}, defaultSort: 'createdAt',
      expand: { author: { kind: 'one', target: 'member', field: 'createdByActorId' } },
    });
    expect(note.table).toBe('meeting_notes');
    expect(note.operations).toEqual({ list: true, get: true, create: true, update: true, delete: true });
    expect(note.expand).toMatchObject({
      createdByActor: { kind: 'one', target: 'actor', field: 'createdByActorId' },
      updatedByActor: { kind: 'one', target: 'actor', field: 'updatedByActorId' },
      deletedBy: { kind: 'one', target: 'member', field: 'deletedById' },
      project: { kind: 'one', target: 'project', field: 'projectId' },
      parentNote: { kind: 'one', target: 'meetingNote', field: 'parentNoteId' },
      attendees: { kind: 'many', target: 'member', relation: 'attendees' },
      author: { kind: 'one', target: 'member', field: 'createdByActorId' },
    });
    expect(note.relations).toEqual({ attendees: { target: 'member', field: 'attendees', max: 150, supported: true } });
    expect(note.relationByPath).toEqual({ attendees: 'attendees' });
    // A declared expand on a reference field wins over the derived name.
    const other = defineResource({
      name: 'memo', path: 'memos', fields: { projectId: f.ref('project') }, filters: {}, defaultSort: 'createdAt',
      expand: { board: { kind: 'one', target: 'project', field: 'projectId' } },
    });
    expect(other.expand).not.toHaveProperty('project');
    expect(other.expand).toHaveProperty('board');
    expect(other.softDelete).toBe(false);
    expect(other.expand).not.toHaveProperty('deletedBy');
  });
});

/** Columns of rows of other kinds in a resource's table: OAuth access tokens share `access_tokens` with personal ones. */
const SHARED_TABLE_COLUMNS: Record<string, string[]> = { access_tokens: ['family_id', 'client_id'] };

describe('tableOf: a resource table from its declaration (no column spelled twice)', () => {
  it('gives exactly the columns the built-in tables hold', async () => {
    const store = await openSqliteStore();
    try {
      for (const res of builtinResources) {
        const rows = await sql<{ name: string }>`select name from pragma_table_info(${res.table})`.execute(store.db);
        const actual = new Set(rows.rows.map((r) => r.name));
        const derived = Object.keys(tableOf(res)).map((c) => c.replace(/\?$/, ''));
        for (const c of derived) expect(actual.has(c), `${res.table}.${c}`).toBe(true);
        const bookkeeping = [...actual].filter((c) => !derived.includes(c) && !SHARED_TABLE_COLUMNS[res.table]?.includes(c));
        expect(bookkeeping, res.table).toEqual([]);
      }
    } finally {
      await store.close();
    }
  });

  it('marks required and server-assigned fields NOT NULL, optional and nullable ones nullable, references as ids', () => {
    const res = defineResource({
      name: 'meetingNote', path: 'meeting-notes', softDelete: true, filters: {}, defaultSort: 'createdAt',
      fields: { title: f.string({ required: true }), body: f.string(), projectId: f.ref('project'), seq: f.readOnly('integer'), due: f.timestamp({ nullable: true }) },
    });
    expect(tableOf(res)).toMatchObject({ title: 'text', 'body?': 'text', 'project_id?': 'id', seq: 'integer', 'due?': 'timestamp', 'purge_at?': 'timestamp', id: 'id', team_id: 'id' });
  });
});

describe('reference fields: one declaration gives the column, the filter and the expand', () => {
  it('f.ref yields an eq|in filter and a one-expand; a declared filter or filter: false wins', () => {
    const res = defineResource({
      name: 'note', path: 'notes', defaultSort: 'createdAt',
      fields: { taskId: f.ref('task'), listId: f.ref('list'), ownerId: f.ref('member', { filter: false }) },
      filters: { listId: { ops: ['eq'] } },
    });
    expect(res.filters.taskId).toEqual({ ops: ['eq', 'in'] });
    expect(res.filters.listId).toEqual({ ops: ['eq'] });
    expect(res.filters.ownerId).toBeUndefined();
    expect(res.expand.task).toEqual({ kind: 'one', target: 'task', field: 'taskId' });
    expect(res.columnOf.taskId).toBe('task_id');
  });
});

describe('the v3 presenter: outcomes to answers, and the response shape as data', () => {
  it('a page is the 200 envelope, a created record 201, a revealed secret missing from the replay, nothing 204', () => {
    expect(v3({ kind: 'page', page: { data: [], limit: 50, hasMore: false, nextCursor: null } })).toEqual({ status: 200, body: { data: [], limit: 50, hasMore: false, nextCursor: null } });
    expect(v3({ kind: 'record', record: { id: 'a' } })).toEqual({ status: 200, body: { id: 'a' } });
    expect(v3({ kind: 'record', record: { id: 'a' }, created: true, revealed: { secret: 's' } })).toEqual({
      status: 201, body: { id: 'a', secret: 's' }, replay: { status: 201, body: { id: 'a' } },
    });
    expect(v3({ kind: 'done' })).toEqual({ status: 204 });
  });

  it('describes each response field: its column or relation and its encoding; write-only fields are absent', () => {
    const registry = new Registry(builtinResources);
    const task = v3Shape(registry.get('task'));
    expect(task).toContainEqual({ name: 'dueAt', source: 'column', column: 'due_at', kind: 'timestamp', encoding: 'instant' });
    expect(task).toContainEqual({ name: 'assignees', source: 'relation', relation: 'assignees', encoding: 'ids' });
    expect(v3Shape(registry.get('webhook')).map((o) => o.name)).not.toContain('secret');
    expect(v3Shape(registry.get('personalAccessToken')).map((o) => o.name)).not.toContain('hash');
  });
});

describe('typed records: a declaration types the records its hooks see (checked by the typecheck of `pnpm test`)', () => {
  it('infers each field value from its builder: nullable, timestamps in ms, enums, relation sets, json schemas', () => {
    const fields = {
      title: f.string({ required: true }),
      note: f.string({ nullable: true }),
      dueAt: f.timestamp({ nullable: true }),
      kind: f.enum(['a', 'b']),
      seq: f.readOnly('integer'),
      tags: f.refs('tags', { target: 'label' }),
    };
    type R = RecordOf<typeof fields>;
    expectTypeOf<R['title']>().toEqualTypeOf<string>();
    expectTypeOf<R['note']>().toEqualTypeOf<string | null>();
    expectTypeOf<R['dueAt']>().toEqualTypeOf<number | null>();
    expectTypeOf<R['kind']>().toEqualTypeOf<'a' | 'b'>();
    expectTypeOf<R['seq']>().toEqualTypeOf<number>();
    expectTypeOf<R['tags']>().toEqualTypeOf<string[]>();
    expectTypeOf<R['updatedAt']>().toEqualTypeOf<number>();
    // Hooks receive the typed record: a wrong use does not compile.
    defineResource({
      name: 'typedNote', path: 'typed-notes', filters: {}, defaultSort: 'createdAt', fields,
      hooks: {
        beforeUpdate(_ctx, current, patch) {
          expectTypeOf(current.dueAt).toEqualTypeOf<number | null>();
          // @ts-expect-error a title is a string, not a number
          patch.title = 1;
        },
      },
    });
  });
});
