import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';

/**
 * Spec "Standard operations" rules 3-8 (lists, sort, filters, cursors, expand, fields),
 * the query codes of "Errors", "Limits" (page size, expand depth) and
 * docs/not-shown.md "Lists, filters, cursors, expand".
 */

const e = encodeURIComponent;
const HOUR = 60 * 60 * 1000;

function expectProblem(r: Reply, status: number, code: string, extras: Record<string, unknown> = {}): void {
  expect({ status: r.status, code: r.body?.code }).toEqual({ status, code });
  expect(r.body.type).toBe(code);
  for (const [k, v] of Object.entries(extras)) expect(r.body[k], `problem field ${k}`).toEqual(v);
}

function idsOf(r: Reply): string[] {
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.data as any[]).map((x) => x.id as string);
}

function sorted(xs: string[]): string[] {
  return [...xs].sort();
}

interface WalkOptions {
  /** Runs between pages (e.g. to insert rows). */
  between?: (page: number) => Promise<void>;
  token?: string;
}

/** Follow nextCursor to the end; checks the envelope on every page. */
async function walk(h: Harness, base: string, limit: number, o: WalkOptions = {}): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page > 200) throw new Error('walk did not end');
    const sep = base.includes('?') ? '&' : '?';
    const r = await h.get(`${base}${sep}limit=${limit}${cursor ? `&cursor=${e(cursor)}` : ''}`, { token: o.token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.limit).toBe(limit);
    seen.push(...(r.body.data as any[]).map((x) => x.id as string));
    if (!r.body.hasMore) {
      expect(r.body.nextCursor).toBeNull();
      expect(r.body.data.length).toBeLessThanOrEqual(limit);
      return seen;
    }
    expect(r.body.data).toHaveLength(limit);
    expect(r.body.nextCursor).toBeTypeOf('string');
    cursor = r.body.nextCursor;
    if (o.between) await o.between(page);
  }
}

/** First page's nextCursor of a query (must have more pages). */
async function firstCursor(h: Harness, path: string, token?: string): Promise<string> {
  const r = await h.get(path, { token });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.hasMore).toBe(true);
  expect(r.body.nextCursor).toBeTypeOf('string');
  return r.body.nextCursor as string;
}

/** Flip one character of a cursor's signed body. */
function tamper(cursor: string): string {
  const i = Math.min(5, cursor.indexOf('.') - 1);
  const c = cursor[i]!;
  return cursor.slice(0, i) + (c === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
}

export function querySuite(factory: StoreFactory): void {
  // -------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rules 3-5 and Limits: page size, envelope, includeTotal`, () => {
    let h: Harness;
    let p: any;
    let pagers: string[];
    const PAGERS = 205;
    beforeAll(async () => {
      h = await harness(factory);
      // members are the cheapest rows to make in bulk: 205 of them (+3 seeded) exceed the 200 page cap
      pagers = [];
      for (let i = 0; i < PAGERS; i++) pagers.push((await h.api.admin.addMember(h.a.id, { name: `Pager ${String(i).padStart(3, '0')}`, role: 'regular' })).id);
      p = await h.project({ name: 'Paging' });
      for (let i = 0; i < 7; i++) await h.task(p.id, { name: `Page task ${i}` });
    });
    afterAll(() => h.close());

    it('the envelope carries exactly data, limit, hasMore, nextCursor (no total by default)', async () => {
      const r = await h.get(`/tasks?projectId=${p.id}&limit=2`);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['data', 'hasMore', 'limit', 'nextCursor']);
      expect(r.body.data).toHaveLength(2);
      expect(r.body.limit).toBe(2);
      expect(r.body.hasMore).toBe(true);
      expect(r.body.nextCursor).toBeTypeOf('string');
      const f = await h.get(`/tasks?projectId=${p.id}&limit=2&includeTotal=false`);
      expect(Object.keys(f.body).sort()).toEqual(['data', 'hasMore', 'limit', 'nextCursor']);
    });

    it('includeTotal=true adds total, counting every matching row (not the page)', async () => {
      const r = await h.get(`/tasks?projectId=${p.id}&limit=2&includeTotal=true`);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['data', 'hasMore', 'limit', 'nextCursor', 'total']);
      expect(r.body.total).toBe(7);
      expect(r.body.data).toHaveLength(2);
      const filtered = await h.get(`/tasks?projectId=${p.id}&niceId[in]=1,2,3&includeTotal=true&limit=1`);
      expect(filtered.body.total).toBe(3);
      expect(filtered.body.data).toHaveLength(1);
      const none = await h.get(`/tasks?projectId=${p.id}&name[eq]=nothing-matches&includeTotal=true`);
      expect(none.body.total).toBe(0);
      expect(none.body.data).toEqual([]);
      const members = await h.get(`/members?name[startsWith]=Pager&includeTotal=true&limit=3`);
      expect(members.body.total).toBe(PAGERS);
      expect(members.body.data).toHaveLength(3);
    });

    it('includeTotal with a value other than true/false is invalid_query_param', async () => {
      for (const v of ['yes', '1', '']) {
        expectProblem(await h.get(`/tasks?projectId=${p.id}&includeTotal=${v}`), 400, 'invalid_query_param', { name: 'includeTotal' });
      }
    });

    it('limit defaults to 50', async () => {
      const r = await h.get(`/members`);
      expect(r.body.limit).toBe(50);
      expect(r.body.data).toHaveLength(50);
      expect(r.body.hasMore).toBe(true);
    });

    it('limit accepts 1 and 200', async () => {
      const one = await h.get(`/members?limit=1`);
      expect(one.body.limit).toBe(1);
      expect(one.body.data).toHaveLength(1);
      const max = await h.get(`/members?limit=200`);
      expect(max.body.limit).toBe(200);
      expect(max.body.data).toHaveLength(200);
      expect(max.body.hasMore).toBe(true);
    });

    // Issue 11: a store may write the page size into the page's statement (SQLite: dialect `inlineLimit`), one
    // statement per size; every size must still be its own, whichever size the statement before it had.
    it('pages of different sizes one after another each have their own size, and a cursor continues at any size', async () => {
      // Smaller sizes first: a statement kept from an earlier size would answer a later, larger one short.
      const pages: Array<[number, Reply]> = [];
      for (const limit of [2, 3, 1, 3, 2, 7, 6]) pages.push([limit, await h.get(`/tasks?projectId=${p.id}&limit=${limit}`)]);
      const all = idsOf(await h.get(`/tasks?projectId=${p.id}&limit=200`));
      expect(all).toHaveLength(7);
      for (const [limit, r] of pages) {
        expect(idsOf(r), `limit=${limit}`).toEqual(all.slice(0, limit));
        expect(r.body.limit).toBe(limit);
        expect(r.body.hasMore, `limit=${limit}`).toBe(limit < 7);
      }
      const first = await h.get(`/tasks?projectId=${p.id}&limit=2`);
      const next = await h.get(`/tasks?projectId=${p.id}&limit=3&cursor=${e(first.body.nextCursor)}`);
      expect(idsOf(next)).toEqual(all.slice(2, 5));
      const last = await h.get(`/tasks?projectId=${p.id}&limit=1&cursor=${e(next.body.nextCursor)}`);
      expect(idsOf(last)).toEqual(all.slice(5, 6));
      const members = await h.get(`/members?name[startsWith]=Pager&limit=4`);
      expect(members.body.data).toHaveLength(4);
      const more = await h.get(`/members?name[startsWith]=Pager&limit=5&cursor=${e(members.body.nextCursor)}`);
      expect(more.body.data).toHaveLength(5);
      expect(new Set([...idsOf(members), ...idsOf(more)]).size).toBe(9);
    });

    it('limit above 200 is clamped to 200, not rejected', async () => {
      for (const v of [201, 500]) {
        const r = await h.get(`/members?limit=${v}`);
        expect(r.status).toBe(200);
        expect(r.body.limit).toBe(200);
        expect(r.body.data).toHaveLength(200);
        expect(r.body.hasMore).toBe(true);
      }
    });

    it('limit 0, negative or not a number is invalid_query_param', async () => {
      for (const v of ['0', '-1', 'abc', '1.5', '']) {
        expectProblem(await h.get(`/tasks?projectId=${p.id}&limit=${e(v)}`), 400, 'invalid_query_param', { name: 'limit' });
        expectProblem(await h.get(`/members?limit=${e(v)}`), 400, 'invalid_query_param', { name: 'limit' });
      }
    });

    it('the last page has hasMore false and nextCursor null; pages cover every row once', async () => {
      const seen = await walk(h, `/members?name[startsWith]=Pager`, 200);
      expect(seen).toHaveLength(PAGERS);
      expect(sorted(seen)).toEqual(sorted(pagers));
      const tasks = await walk(h, `/tasks?projectId=${p.id}`, 3);
      expect(new Set(tasks).size).toBe(7);
    });
  });

  // -------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 6: sort`, () => {
    let h: Harness;
    let p: any;
    const byName: Record<string, any> = {};
    beforeAll(async () => {
      h = await harness(factory);
      p = await h.project({ name: 'Sorting' });
      // creation order, order value and name order all differ
      for (const [name, order] of [['delta', 2], ['alpha', 5], ['echo', 1], ['charlie', 4], ['bravo', 3]] as const) {
        h.clock.advance(10);
        byName[name] = await h.task(p.id, { name, order });
      }
    });
    afterAll(() => h.close());

    const names = (r: Reply) => {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.data as any[]).map((t) => t.name);
    };

    it('sort=name ascends, name:asc is the same', async () => {
      const asc = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
      expect(names(await h.get(`/tasks?projectId=${p.id}&sort=name`))).toEqual(asc);
      expect(names(await h.get(`/tasks?projectId=${p.id}&sort=name:asc`))).toEqual(asc);
    });

    it('-name and name:desc give the same descending order', async () => {
      const desc = ['echo', 'delta', 'charlie', 'bravo', 'alpha'];
      expect(names(await h.get(`/tasks?projectId=${p.id}&sort=-name`))).toEqual(desc);
      expect(names(await h.get(`/tasks?projectId=${p.id}&sort=name:desc`))).toEqual(desc);
    });

    it('both markers together (-name:desc, -name:asc) are invalid_query_param', async () => {
      for (const s of ['-name:desc', '-name:asc']) {
        expectProblem(await h.get(`/tasks?projectId=${p.id}&sort=${e(s)}`), 400, 'invalid_query_param', { name: 'sort' });
      }
    });

    it('an unknown or unsortable field is sort_field_invalid with field and resource', async () => {
      const r = await h.get(`/tasks?projectId=${p.id}&sort=bogus`);
      expectProblem(r, 400, 'sort_field_invalid', { field: 'bogus', resource: 'tasks' });
      expect(r.body.allowed).toEqual(expect.arrayContaining(['name', 'order', 'createdAt', 'updatedAt', 'dueAt']));
      expectProblem(await h.get(`/tasks?projectId=${p.id}&sort=-bogus`), 400, 'sort_field_invalid', { field: 'bogus', resource: 'tasks' });
      expectProblem(await h.get(`/tasks?projectId=${p.id}&sort=description:desc`), 400, 'sort_field_invalid', { field: 'description', resource: 'tasks' });
      expectProblem(await h.get(`/projects?sort=dueAt`), 400, 'sort_field_invalid', { field: 'dueAt', resource: 'projects' });
    });

    it('tasks with projectId default to order', async () => {
      expect(names(await h.get(`/tasks?projectId=${p.id}`))).toEqual(['echo', 'delta', 'bravo', 'charlie', 'alpha']);
    });

    it('tasks without projectId default to -updatedAt', async () => {
      h.clock.advance(1000);
      expect((await h.patch(`/tasks/${byName.charlie.id}`, { description: 'touched' })).status).toBe(200);
      h.clock.advance(1000);
      expect((await h.patch(`/tasks/${byName.alpha.id}`, { description: 'touched' })).status).toBe(200);
      // projectId[eq] is a filter, not the projectId list parameter: the default sort stays -updatedAt
      const r = await h.get(`/tasks?projectId[eq]=${p.id}`);
      expect(names(r)).toEqual(['alpha', 'charlie', 'bravo', 'echo', 'delta']);
      const all = await h.get(`/tasks`);
      expect(names(all).slice(0, 2)).toEqual(['alpha', 'charlie']);
      const upd = (all.body.data as any[]).map((t) => Date.parse(t.updatedAt));
      expect(upd).toEqual([...upd].sort((x, y) => y - x));
    });

    it('projects default to order', async () => {
      for (const [name, order] of [['Sortp b', 30], ['Sortp c', 10], ['Sortp a', 20]] as const) await h.project({ name, order });
      const r = await h.get(`/projects?name[startsWith]=${e('Sortp ')}`);
      expect(names(r)).toEqual(['Sortp c', 'Sortp a', 'Sortp b']);
      expect(names(await h.get(`/projects?name[startsWith]=${e('Sortp ')}&sort=-order`))).toEqual(['Sortp b', 'Sortp a', 'Sortp c']);
    });
  });

  // -------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 7: filters`, () => {
    let h: Harness;
    let p: any;
    let q: any;
    let tq: any;
    let s0: string;
    let s1: any;
    let s2: any;
    let l1: any;
    let l2: any;
    const t: Record<string, any> = {};
    const D1 = '2026-04-01T00:00:00.000Z';
    const D2 = '2026-04-02T00:00:00.000Z';
    const D3 = '2026-04-03T00:00:00.000Z';
    const list = async (query: string) => sorted(idsOf(await h.get(`/tasks?projectId=${p.id}&limit=200&${query}`)));
    const of = (...keys: string[]) => sorted(keys.map((k) => t[k].id));

    beforeAll(async () => {
      h = await harness(factory);
      const owner = h.a.owner.id;
      const regular = h.a.regular.id;
      const client = h.a.client.id;
      p = await h.project({ name: 'Filters', members: [owner, regular, client] });
      q = await h.project({ name: 'Filters other' });
      s0 = (await h.get(`/projects/${p.id}`)).body.defaultStatusId;
      s1 = (await h.post('/statuses', { name: 'Doing', projectId: p.id, order: 200 })).body;
      s2 = (await h.post('/statuses', { name: 'Done', projectId: p.id, order: 300 })).body;
      l1 = (await h.post('/labels', { name: 'qa-red' })).body;
      l2 = (await h.post('/labels', { name: 'qa-blue' })).body;
      expect([s1.id, s2.id, l1.id, l2.id].every((x) => typeof x === 'string')).toBe(true);
      t.t1 = await h.task(p.id, { name: 'Alpha one', dueAt: D1, completed: true, assignees: [owner], labels: [l1.id], subscribers: [regular], statusId: s1.id });
      t.t2 = await h.task(p.id, { name: 'alpha TWO', dueAt: D2, assignees: [regular], labels: [l2.id], subscribers: [owner], statusId: s2.id });
      t.t3 = await h.task(p.id, { name: 'Beta 100% done', dueAt: D3, archived: true, assignees: [owner, regular], labels: [l1.id, l2.id] });
      t.t4 = await h.task(p.id, { name: 'a_c task', subscribers: [client] });
      t.t5 = await h.task(p.id, { name: 'abc task' });
      t.t6 = await h.task(p.id, { name: 'back\\slash', dueAt: D3 });
      t.t7 = await h.task(p.id, { name: 'Ärger Über' });
      tq = await h.task(q.id, { name: 'In other project' });
    });
    afterAll(() => h.close());

    it('eq on a string matches exactly', async () => {
      expect(await list(`name[eq]=${e('alpha TWO')}`)).toEqual(of('t2'));
      expect(await list(`name[eq]=${e('alpha')}`)).toEqual([]);
    });

    it('contains is case-insensitive and matches anywhere', async () => {
      expect(await list(`name[contains]=ALPHA`)).toEqual(of('t1', 't2'));
      expect(await list(`name[contains]=one`)).toEqual(of('t1', 't3'));
      expect(await list(`name[contains]=${e('TASK')}`)).toEqual(of('t4', 't5'));
      // Unicode lower case on both sides, not just ASCII
      expect(await list(`name[contains]=${e('ärger')}`)).toEqual(of('t7'));
      expect(await list(`name[contains]=${e('üBER')}`)).toEqual(of('t7'));
    });

    it('startsWith is case-insensitive and anchored at the start', async () => {
      expect(await list(`name[startsWith]=ALP`)).toEqual(of('t1', 't2'));
      expect(await list(`name[startsWith]=one`)).toEqual([]);
      expect(await list(`name[startsWith]=b`)).toEqual(of('t3', 't6'));
      expect(await list(`name[startsWith]=${e('äR')}`)).toEqual(of('t7'));
    });

    it('%, _ and \\ in contains/startsWith are literal (LIKE escaping)', async () => {
      expect(await list(`name[contains]=${e('%')}`)).toEqual(of('t3'));
      expect(await list(`name[contains]=${e('0% d')}`)).toEqual(of('t3'));
      expect(await list(`name[contains]=${e('_')}`)).toEqual(of('t4'));
      expect(await list(`name[startsWith]=${e('a_c')}`)).toEqual(of('t4'));
      expect(await list(`name[contains]=${e('a_c')}`)).toEqual(of('t4'));
      expect(await list(`name[startsWith]=${e('a%')}`)).toEqual([]);
      expect(await list(`name[contains]=${e('\\')}`)).toEqual(of('t6'));
      expect(await list(`name[contains]=${e('k\\s')}`)).toEqual(of('t6'));
    });

    it('in takes a comma-separated list', async () => {
      expect(await list(`niceId[in]=1,3`)).toEqual(of('t1', 't3'));
      expect(await list(`statusId[in]=${s1.id},${s2.id}`)).toEqual(of('t1', 't2'));
      expect(await list(`statusId[eq]=${s0}`)).toEqual(of('t3', 't4', 't5', 't6', 't7'));
      const both = sorted(idsOf(await h.get(`/tasks?projectId[in]=${p.id},${q.id}&limit=200`)));
      expect(both).toEqual(sorted([...Object.values(t).map((x) => x.id), tq.id]));
      expect(idsOf(await h.get(`/tasks?projectId[in]=${q.id}`))).toEqual([tq.id]);
    });

    it('gt/gte/lt/lte on timestamps honour the boundary and skip nulls', async () => {
      expect(await list(`dueAt[gt]=${e(D2)}`)).toEqual(of('t3', 't6'));
      expect(await list(`dueAt[gte]=${e(D2)}`)).toEqual(of('t2', 't3', 't6'));
      expect(await list(`dueAt[lt]=${e(D2)}`)).toEqual(of('t1'));
      expect(await list(`dueAt[lte]=${e(D2)}`)).toEqual(of('t1', 't2'));
      // the same instant written with an offset
      expect(await list(`dueAt[gte]=${e('2026-04-02T02:00:00.000+02:00')}`)).toEqual(of('t2', 't3', 't6'));
      expect(await list(`dueAt[gt]=${e(D1)}&dueAt[lt]=${e(D3)}`)).toEqual(of('t2'));
    });

    it('gt/gte/lt/lte/eq on numbers', async () => {
      const st = async (qs: string) => sorted(idsOf(await h.get(`/statuses?projectId=${p.id}&${qs}`)));
      expect(await st('order[gt]=200')).toEqual([s2.id]);
      expect(await st('order[gte]=200')).toEqual(sorted([s1.id, s2.id]));
      expect(await st('order[lt]=200')).toEqual([s0]);
      expect(await st('order[lte]=200')).toEqual(sorted([s0, s1.id]));
      expect(await st('order[eq]=300')).toEqual([s2.id]);
      expect(await st('order[gt]=150.5&order[lt]=250')).toEqual([s1.id]);
    });

    it('boolean eq', async () => {
      expect(await list(`completed[eq]=true`)).toEqual(of('t1'));
      expect(await list(`completed[eq]=false`)).toEqual(of('t2', 't3', 't4', 't5', 't6', 't7'));
      expect(await list(`archived[eq]=true`)).toEqual(of('t3'));
      expect(await list(`archived[eq]=false&completed[eq]=false`)).toEqual(of('t2', 't4', 't5', 't6', 't7'));
    });

    it('null and notNull take true or false', async () => {
      const x1 = await h.project({ name: 'NullProj live' });
      const x2 = await h.project({ name: 'NullProj trashed' });
      expect((await h.del(`/projects/${x2.id}`)).status).toBe(204);
      const pr = async (qs: string) => idsOf(await h.get(`/projects?name[startsWith]=NullProj&${qs}`));
      expect(await pr('')).toEqual([x1.id]);
      expect(await pr('purgeAt[null]=true')).toEqual([x1.id]);
      expect(await pr('purgeAt[notNull]=true')).toEqual([x2.id]);
      expect(await pr('purgeAt[null]=false')).toEqual([x2.id]);
      expect(await pr('purgeAt[notNull]=false')).toEqual([x1.id]);
      expectProblem(await h.get(`/projects?purgeAt[null]=yes`), 400, 'invalid_query_param', { name: 'purgeAt[null]' });
      expectProblem(await h.get(`/projects?purgeAt[notNull]=`), 400, 'invalid_query_param', { name: 'purgeAt[notNull]' });
    });

    it('createdAt range on projects', async () => {
      h.clock.advance(HOUR);
      const late = await h.project({ name: 'Created later' });
      const r = idsOf(await h.get(`/projects?createdAt[gte]=${e(late.createdAt)}`));
      expect(r).toEqual([late.id]);
      const before = idsOf(await h.get(`/projects?createdAt[lt]=${e(late.createdAt)}&limit=200`));
      expect(before).toContain(p.id);
      expect(before).not.toContain(late.id);
    });

    it('relation filters assigneeId, labelId, subscriberId with eq and in', async () => {
      const { owner, regular, client } = h.a;
      expect(await list(`assigneeId[eq]=${owner.id}`)).toEqual(of('t1', 't3'));
      expect(await list(`assigneeId[eq]=${regular.id}`)).toEqual(of('t2', 't3'));
      expect(await list(`assigneeId[eq]=${client.id}`)).toEqual([]);
      // t3 has both assignees and must appear once
      const inBoth = idsOf(await h.get(`/tasks?projectId=${p.id}&assigneeId[in]=${owner.id},${regular.id}`));
      expect(sorted(inBoth)).toEqual(of('t1', 't2', 't3'));
      expect(await list(`labelId[eq]=${l1.id}`)).toEqual(of('t1', 't3'));
      expect(await list(`labelId[eq]=${l2.id}`)).toEqual(of('t2', 't3'));
      expect(await list(`labelId[in]=${l1.id},${l2.id}`)).toEqual(of('t1', 't2', 't3'));
      expect(await list(`subscriberId[eq]=${client.id}`)).toEqual(of('t4'));
      expect(await list(`subscriberId[in]=${owner.id},${regular.id}`)).toEqual(of('t1', 't2'));
      // conditions combine with AND
      expect(await list(`assigneeId[eq]=${owner.id}&labelId[eq]=${l2.id}`)).toEqual(of('t3'));
    });

    it('an operator the field does not allow is invalid_query_param with name and allowed', async () => {
      const r = await h.get(`/tasks?projectId=${p.id}&name[gt]=a`);
      expectProblem(r, 400, 'invalid_query_param', { name: 'name[gt]' });
      expect(r.body.allowed).toEqual(expect.arrayContaining(['name[eq]', 'name[contains]', 'name[startsWith]']));
      expect(r.body.allowed).not.toContain('name[gt]');
      expectProblem(await h.get(`/tasks?completed[in]=true`), 400, 'invalid_query_param', { name: 'completed[in]' });
      expectProblem(await h.get(`/tasks?dueAt[eq]=${e(D1)}`), 400, 'invalid_query_param', { name: 'dueAt[eq]' });
      expectProblem(await h.get(`/tasks?name[like]=a`), 400, 'invalid_query_param', { name: 'name[like]' });
    });

    it('an unknown parameter or filter is invalid_query_param', async () => {
      for (const k of ['bogus', 'nmae[eq]', 'storyPoints[gt]', 'name']) {
        const r = await h.get(`/tasks?projectId=${p.id}&${k}=1`);
        expectProblem(r, 400, 'invalid_query_param', { name: k });
        expect(Array.isArray(r.body.allowed)).toBe(true);
      }
    });

    it('a parameter given twice is invalid_query_param', async () => {
      expectProblem(await h.get(`/tasks?name[eq]=a&name[eq]=b`), 400, 'invalid_query_param', { name: 'name[eq]' });
    });

    it('bad boolean, timestamp and number values are invalid_query_param', async () => {
      expectProblem(await h.get(`/tasks?completed[eq]=yes`), 400, 'invalid_query_param', { name: 'completed[eq]' });
      expectProblem(await h.get(`/tasks?archived[eq]=1`), 400, 'invalid_query_param', { name: 'archived[eq]' });
      expectProblem(await h.get(`/tasks?dueAt[gt]=tomorrow`), 400, 'invalid_query_param', { name: 'dueAt[gt]' });
      expectProblem(await h.get(`/tasks?dueAt[gt]=2026-13-45`), 400, 'invalid_query_param', { name: 'dueAt[gt]' });
      expectProblem(await h.get(`/tasks?createdAt[lt]=1700000000000`), 400, 'invalid_query_param', { name: 'createdAt[lt]' });
      expectProblem(await h.get(`/statuses?order[gt]=abc`), 400, 'invalid_query_param', { name: 'order[gt]' });
      expectProblem(await h.get(`/statuses?order[lte]=`), 400, 'invalid_query_param', { name: 'order[lte]' });
      expectProblem(await h.get(`/tasks?niceId[in]=`), 400, 'invalid_query_param', { name: 'niceId[in]' });
    });

    it('pagination-style parameters are pagination_param_unknown', async () => {
      for (const k of ['offset', 'page', 'after', 'pageSize', 'skip']) {
        expectProblem(await h.get(`/tasks?${k}=2`), 400, 'pagination_param_unknown', { name: k });
      }
    });
  });

  // -------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rules 5-6: cursor pagination`, () => {
    let h: Harness;
    let p: any;
    let seedIds: string[];
    const DUE = [null, '2026-05-03T00:00:00.000Z', '2026-05-01T00:00:00.000Z', null, '2026-05-02T00:00:00.000Z', '2026-05-01T00:00:00.000Z',
      null, '2026-05-04T00:00:00.000Z', '2026-05-02T00:00:00.000Z', null, '2026-05-05T00:00:00.000Z', '2026-05-01T00:00:00.000Z', null];
    const NAMES = ['kilo', 'alpha', 'mike', 'bravo', 'alpha', 'lima', 'charlie', 'bravo', 'juliet', 'alpha', 'delta', 'echo', 'golf'];

    /** 13 tasks with duplicate names, duplicate and null due dates, and orders unlike creation order. */
    async function seed(projectId: string): Promise<any[]> {
      const out: any[] = [];
      for (let i = 0; i < NAMES.length; i++) {
        h.clock.advance(i % 3 === 0 ? 0 : 7);
        out.push(await h.task(projectId, { name: NAMES[i], dueAt: DUE[i], order: ((i * 5) % 13) + 1 }));
      }
      return out;
    }

    beforeAll(async () => {
      h = await harness(factory);
      p = await h.project({ name: 'Cursors' });
      seedIds = (await seed(p.id)).map((x) => x.id);
    });
    afterAll(() => h.close());

    for (const sort of ['order', '-order', '-createdAt', 'createdAt', 'name', 'name:desc', '-name', 'dueAt', '-dueAt', 'dueAt:desc', 'niceId', '-updatedAt']) {
      it(`walks every row exactly once under sort=${sort}`, async () => {
        const full = idsOf(await h.get(`/tasks?projectId=${p.id}&sort=${e(sort)}&limit=200`));
        expect(sorted(full)).toEqual(sorted(seedIds));
        for (const limit of [1, 5]) {
          const walked = await walk(h, `/tasks?projectId=${p.id}&sort=${e(sort)}`, limit);
          expect(walked).toEqual(full);
        }
      });
    }

    it('nulls sort last ascending and first descending', async () => {
      const asc = (await h.get(`/tasks?projectId=${p.id}&sort=dueAt&limit=200`)).body.data.map((x: any) => x.dueAt);
      const nonNull = DUE.filter((d): d is string => d !== null).sort();
      expect(asc).toEqual([...nonNull, null, null, null, null, null]);
      const desc = (await h.get(`/tasks?projectId=${p.id}&sort=-dueAt&limit=200`)).body.data.map((x: any) => x.dueAt);
      expect(desc).toEqual([null, null, null, null, null, ...[...nonNull].reverse()]);
    });

    it('the default sort is kept through cursors', async () => {
      const full = idsOf(await h.get(`/tasks?projectId=${p.id}&limit=200`));
      expect(await walk(h, `/tasks?projectId=${p.id}`, 2)).toEqual(full);
      const fullWs = idsOf(await h.get(`/tasks?limit=200`));
      expect(await walk(h, `/tasks`, 5)).toEqual(fullWs);
    });

    describe('rows inserted between pages', () => {
      let proj: any;
      let n = 0;
      beforeAll(async () => {
        proj = await h.project({ name: 'Inserts' });
        await seed(proj.id);
      });
      for (const sort of ['order', 'name', '-createdAt', 'dueAt', '-dueAt', 'name:desc']) {
        it(`never make a pre-existing row vanish or repeat (sort=${sort})`, async () => {
          const before = idsOf(await h.get(`/tasks?projectId=${proj.id}&limit=200`));
          const n0 = n;
          const walked = await walk(h, `/tasks?projectId=${proj.id}&sort=${e(sort)}`, 6, {
            between: async () => {
              // lands before, inside or after the boundary, depending on n
              n++;
              await h.task(proj.id, { name: NAMES[(n * 7) % NAMES.length], dueAt: DUE[(n * 5) % DUE.length], order: (n % 3) * 6 + 0.5 });
            },
          });
          expect(n - n0).toBeGreaterThanOrEqual(2);
          expect(new Set(walked).size).toBe(walked.length);
          for (const id of before) expect(walked.filter((x) => x === id), `row ${id}`).toHaveLength(1);
        });
      }
    });

    it('a cursor alone keeps its sort; the same sort in either spelling is accepted', async () => {
      const full = idsOf(await h.get(`/tasks?projectId=${p.id}&sort=-name&limit=200`));
      const c = await firstCursor(h, `/tasks?projectId=${p.id}&sort=-name&limit=4`);
      const alone = await h.get(`/tasks?projectId=${p.id}&limit=4&cursor=${e(c)}`);
      expect(idsOf(alone)).toEqual(full.slice(4, 8));
      const spelled = await h.get(`/tasks?projectId=${p.id}&limit=4&sort=name:desc&cursor=${e(c)}`);
      expect(idsOf(spelled)).toEqual(full.slice(4, 8));
      const same = await h.get(`/tasks?projectId=${p.id}&limit=4&sort=-name&cursor=${e(c)}`);
      expect(idsOf(same)).toEqual(full.slice(4, 8));
      // limit may change between pages
      const bigger = await h.get(`/tasks?projectId=${p.id}&limit=6&cursor=${e(c)}`);
      expect(idsOf(bigger)).toEqual(full.slice(4, 10));
      const asc = idsOf(await h.get(`/tasks?projectId=${p.id}&sort=name&limit=200`));
      const ca = await firstCursor(h, `/tasks?projectId=${p.id}&sort=name:asc&limit=4`);
      expect(idsOf(await h.get(`/tasks?projectId=${p.id}&sort=name&limit=4&cursor=${e(ca)}`))).toEqual(asc.slice(4, 8));
    });

    it('a cursor with a different sort is cursor_sort_mismatch', async () => {
      const c = await firstCursor(h, `/tasks?projectId=${p.id}&sort=name&limit=4`);
      expectProblem(await h.get(`/tasks?projectId=${p.id}&sort=-name&cursor=${e(c)}`), 400, 'cursor_sort_mismatch');
      expectProblem(await h.get(`/tasks?projectId=${p.id}&sort=name:desc&cursor=${e(c)}`), 400, 'cursor_sort_mismatch');
      expectProblem(await h.get(`/tasks?projectId=${p.id}&sort=order&cursor=${e(c)}`), 400, 'cursor_sort_mismatch');
      // a cursor issued under the default sort (order) with an explicit other sort
      const d = await firstCursor(h, `/tasks?projectId=${p.id}&limit=4`);
      expectProblem(await h.get(`/tasks?projectId=${p.id}&sort=name&cursor=${e(d)}`), 400, 'cursor_sort_mismatch');
      expect((await h.get(`/tasks?projectId=${p.id}&sort=order&cursor=${e(d)}`)).status).toBe(200);
    });

    it('a tampered or garbage cursor is cursor_invalid', async () => {
      const c = await firstCursor(h, `/tasks?projectId=${p.id}&limit=4`);
      expect((await h.get(`/tasks?projectId=${p.id}&cursor=${e(c)}`)).status).toBe(200);
      expectProblem(await h.get(`/tasks?projectId=${p.id}&cursor=${e(tamper(c))}`), 400, 'cursor_invalid');
      const dot = c.indexOf('.');
      const sigFlip = c.slice(0, dot + 2) + (c[dot + 2] === 'A' ? 'B' : 'A') + c.slice(dot + 3);
      expectProblem(await h.get(`/tasks?projectId=${p.id}&cursor=${e(sigFlip)}`), 400, 'cursor_invalid');
      for (const junk of ['abc', 'x.y', '', c.slice(0, dot)]) {
        expectProblem(await h.get(`/tasks?projectId=${p.id}&cursor=${e(junk)}`), 400, 'cursor_invalid');
      }
    });

    it('a cursor from another endpoint is cursor_invalid', async () => {
      const c = await firstCursor(h, `/tasks?projectId=${p.id}&limit=2`);
      expectProblem(await h.get(`/projects?cursor=${e(c)}`), 400, 'cursor_invalid');
      expectProblem(await h.get(`/statuses?projectId=${p.id}&cursor=${e(c)}`), 400, 'cursor_invalid');
    });

    it('a cursor with other filters is cursor_invalid', async () => {
      const c = await firstCursor(h, `/tasks?projectId=${p.id}&name[contains]=a&limit=2`);
      expect((await h.get(`/tasks?projectId=${p.id}&name[contains]=a&cursor=${e(c)}`)).status).toBe(200);
      expectProblem(await h.get(`/tasks?projectId=${p.id}&cursor=${e(c)}`), 400, 'cursor_invalid');
      expectProblem(await h.get(`/tasks?projectId=${p.id}&name[contains]=b&cursor=${e(c)}`), 400, 'cursor_invalid');
      expectProblem(await h.get(`/tasks?name[contains]=a&cursor=${e(c)}`), 400, 'cursor_invalid');
      const other = await h.project({ name: 'Cursor other' });
      expectProblem(await h.get(`/tasks?projectId=${other.id}&name[contains]=a&cursor=${e(c)}`), 400, 'cursor_invalid');
    });

    it("a cursor issued in workspace A is cursor_invalid with workspace B's token", async () => {
      const c = await firstCursor(h, `/tasks?limit=2`);
      expect((await h.get(`/tasks?limit=2&cursor=${e(c)}`)).status).toBe(200);
      expectProblem(await h.get(`/tasks?limit=2&cursor=${e(c)}`, { token: h.b.owner.token }), 400, 'cursor_invalid');
      const cp = await firstCursor(h, `/tasks?projectId=${p.id}&limit=2`);
      expectProblem(await h.get(`/tasks?projectId=${p.id}&limit=2&cursor=${e(cp)}`, { token: h.b.owner.token }), 400, 'cursor_invalid');
    });

    it('a cursor is valid for 24 hours, then cursor_invalid', async () => {
      const c = await firstCursor(h, `/tasks?projectId=${p.id}&limit=2`);
      h.clock.advance(23 * HOUR);
      expect((await h.get(`/tasks?projectId=${p.id}&limit=2&cursor=${e(c)}`)).status).toBe(200);
      h.clock.advance(2 * HOUR);
      expectProblem(await h.get(`/tasks?projectId=${p.id}&limit=2&cursor=${e(c)}`), 400, 'cursor_invalid');
    });
  });

  // -------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 8 and Limits: expand`, () => {
    let h: Harness;
    let pf: any;
    let p: any;
    const t: Record<string, any> = {};
    const l: Record<string, any> = {};
    beforeAll(async () => {
      h = await harness(factory);
      const pr = await h.post('/portfolios', { name: 'Expand portfolio' });
      expect(pr.status).toBe(201);
      pf = pr.body;
      p = await h.project({ name: 'Expand', portfolioId: pf.id, members: [h.a.owner.id, h.a.regular.id] });
      t.e1 = await h.task(p.id, { name: 'e1', assignees: [h.a.owner.id, h.a.regular.id] });
      t.e2 = await h.task(p.id, { name: 'e2', dependencyId: t.e1.id });
      t.e3 = await h.task(p.id, { name: 'e3', dependencyId: t.e2.id });
      t.e4 = await h.task(p.id, { name: 'e4', parentTaskId: t.e1.id });
      l.l1 = (await h.post('/lists', { name: 'l1', projectId: p.id })).body;
      l.l2 = (await h.post('/lists', { name: 'l2', projectId: p.id, dependencyId: l.l1.id })).body;
      l.l3 = (await h.post('/lists', { name: 'l3', projectId: p.id, dependencyId: l.l2.id })).body;
      expect(typeof l.l3.id).toBe('string');
    });
    afterAll(() => h.close());

    it('without expand only ids are returned', async () => {
      const r = await h.get(`/tasks/${t.e1.id}`);
      expect(r.body.projectId).toBe(p.id);
      expect(r.body).not.toHaveProperty('project');
      expect(sorted(r.body.assignees)).toEqual(sorted([h.a.owner.id, h.a.regular.id]));
      const rows = (await h.get(`/tasks?projectId=${p.id}`)).body.data as any[];
      for (const row of rows) {
        expect(row).not.toHaveProperty('project');
        expect(row).not.toHaveProperty('createdByActor');
        expect(row.createdByActorId).toBeTypeOf('string');
      }
    });

    it('expand=project adds the object beside projectId on lists and single reads', async () => {
      const r = await h.get(`/tasks?projectId=${p.id}&expand=project`);
      expect(r.status).toBe(200);
      for (const row of r.body.data) {
        expect(row.projectId).toBe(p.id);
        expect(row.project).toMatchObject({ id: p.id, name: 'Expand', portfolioId: pf.id });
      }
      const one = await h.get(`/tasks/${t.e2.id}?expand=project,dependency`);
      expect(one.body.project.id).toBe(p.id);
      expect(one.body.dependency).toMatchObject({ id: t.e1.id, name: 'e1' });
    });

    it('expanding an id-array relation replaces the ids with objects', async () => {
      const r = await h.get(`/tasks/${t.e1.id}?expand=assignees`);
      const byId = new Map((r.body.assignees as any[]).map((m) => [m.id, m]));
      expect(sorted([...byId.keys()])).toEqual(sorted([h.a.owner.id, h.a.regular.id]));
      expect(byId.get(h.a.owner.id)).toMatchObject({ name: 'Alpha Owner', role: 'owner' });
      expect(byId.get(h.a.regular.id)).toMatchObject({ name: 'Alpha Regular' });
    });

    it('nested hops: tasks?expand=project.portfolio.owner', async () => {
      const r = await h.get(`/tasks?projectId=${p.id}&expand=project.portfolio.owner`);
      expect(r.status).toBe(200);
      const row = r.body.data[0];
      expect(row.project.id).toBe(p.id);
      expect(row.project.portfolio).toMatchObject({ id: pf.id, name: 'Expand portfolio' });
      expect(row.project.portfolio.owner).toMatchObject({ id: h.a.owner.id, name: 'Alpha Owner' });
      // four hops are allowed
      const four = await h.get(`/tasks/${t.e1.id}?expand=project.portfolio.owner.roleRecord`);
      expect(four.status).toBe(200);
      expect(four.body.project.portfolio.owner.roleRecord.id).toBe(h.a.roleIds.owner);
    });

    it('five hops is expand_too_deep with max, depth and path', async () => {
      const path = 'project.portfolio.owner.roleRecord.createdByActor';
      expectProblem(await h.get(`/tasks?expand=${path}`), 400, 'expand_too_deep', { max: 4, depth: 5, path });
      expectProblem(await h.get(`/tasks/${t.e1.id}?expand=project,${path}`), 400, 'expand_too_deep', { max: 4, depth: 5, path });
    });

    it('an unknown relation is expand_unknown_relation with the available names', async () => {
      const r = await h.get(`/tasks?expand=bogus`);
      expectProblem(r, 400, 'expand_unknown_relation');
      expect(r.body.available).toEqual(expect.arrayContaining(['project', 'list', 'status', 'parentTask', 'dependency', 'subtasks', 'assignees', 'labels', 'subscribers', 'createdBy', 'createdByActor', 'updatedByActor']));
      const nested = await h.get(`/tasks?expand=project.bogus`);
      expectProblem(nested, 400, 'expand_unknown_relation');
      expect(nested.body.available).toEqual(expect.arrayContaining(['portfolio', 'members', 'createdByActor']));
      expect(nested.body.available).not.toContain('subtasks');
      // projectId is a field, not a relation
      expectProblem(await h.get(`/tasks/${t.e1.id}?expand=projectId`), 400, 'expand_unknown_relation');
    });

    it('a path that returns to a resource type is expand_cycle_detected', async () => {
      expectProblem(await h.get(`/tasks?expand=project.statuses.tasks`), 400, 'expand_cycle_detected');
      expectProblem(await h.get(`/tasks?expand=status.tasks`), 400, 'expand_cycle_detected');
      expectProblem(await h.get(`/projects?expand=statuses.project`), 400, 'expand_cycle_detected');
      expectProblem(await h.get(`/tasks/${t.e1.id}?expand=list.project.statuses.tasks`), 400, 'expand_cycle_detected');
    });

    it('consecutive hops within one type (dependency.dependency) are chains, not cycles', async () => {
      const r = await h.get(`/tasks/${t.e3.id}?expand=dependency.dependency`);
      expect(r.status).toBe(200);
      expect(r.body.dependency.id).toBe(t.e2.id);
      expect(r.body.dependency.dependency.id).toBe(t.e1.id);
      const lists = await h.get(`/lists?projectId=${p.id}&expand=dependency.dependency`);
      expect(lists.status).toBe(200);
      const l3 = lists.body.data.find((x: any) => x.id === l.l3.id);
      expect(l3.dependency.id).toBe(l.l2.id);
      expect(l3.dependency.dependency.id).toBe(l.l1.id);
      const l1 = lists.body.data.find((x: any) => x.id === l.l1.id);
      expect(l1.dependency).toBeNull();
      const sub = await h.get(`/tasks/${t.e4.id}?expand=parentTask.subtasks`);
      expect(sub.status).toBe(200);
      expect(sub.body.parentTask.id).toBe(t.e1.id);
      expect(sub.body.parentTask.subtasks.map((x: any) => x.id)).toEqual([t.e4.id]);
    });

    it('expand is batched: the number of queries does not grow with the number of rows', async () => {
      // 5 rows vs 40 rows spread over more projects, creators and assignees: a query per row or per key would show
      const members = [h.a.owner.id, h.a.regular.id, h.a.client.id];
      const projects: any[] = [];
      for (let i = 0; i < 4; i++) projects.push(await h.project({ name: `Batch ${i}`, members: [h.a.owner.id, h.a.regular.id] }));
      const make = async (prefix: string, n: number, spread: number) => {
        for (let i = 0; i < n; i++) {
          const token = i % 2 === 0 ? h.a.owner.token : h.a.regular.token;
          const assignees = [members[i % 3]!, members[(i + 1) % 3]!];
          await h.task(projects[i % spread].id, { name: `${prefix} ${i}`, assignees }, token);
        }
      };
      await make('Small', 5, 1);
      await make('Big', 40, 4);
      const path = (prefix: string) => `/tasks?name[startsWith]=${prefix}&limit=50&expand=project,assignees,createdByActor`;
      let r5!: Reply;
      let r40!: Reply;
      await h.get(path('Big'));
      const q5 = await h.countQueries(async () => { r5 = await h.get(path('Small')); });
      const q40 = await h.countQueries(async () => { r40 = await h.get(path('Big')); });
      expect(r5.body.data).toHaveLength(5);
      expect(r40.body.data).toHaveLength(40);
      const projectIds = new Set<string>();
      const actorIds = new Set<string>();
      for (const row of r40.body.data) {
        expect(row.project.id).toBe(row.projectId);
        projectIds.add(row.project.id);
        expect(row.assignees).toHaveLength(2);
        expect(row.assignees[0].id).toBeTypeOf('string');
        expect(row.createdByActor.id).toBe(row.createdByActorId);
        actorIds.add(row.createdByActor.id);
      }
      expect(projectIds.size).toBe(4);
      expect(actorIds.size).toBe(2);
      expect(q5.length).toBeGreaterThan(0);
      expect(q40.length).toBe(q5.length);
    });
  });

  // -------------------------------------------------------------------------
  describe(`[${factory.name}] Limits: expand row budget (docs/not-shown.md: 2,000 rows)`, () => {
    let h: Harness;
    let child: any;
    const M = 100;
    // Every path ends in a hop to the same M members; the row budget is per request across all hops.
    const PATHS = [
      'assignees', 'subscribers',
      'project.members', 'project.portfolio.members',
      'status.assignees', 'status.project.members', 'status.project.portfolio.members',
      'list.assignees', 'list.project.members', 'list.project.portfolio.members', 'list.status.assignees', 'list.status.project.members',
      'parentTask.assignees', 'parentTask.subscribers', 'parentTask.project.members', 'parentTask.project.portfolio.members',
      'parentTask.status.assignees', 'parentTask.list.assignees',
      'dependency.assignees',
      'dependency.subscribers', 'dependency.project.members',
    ];
    beforeAll(async () => {
      h = await harness(factory);
      const ms: string[] = [];
      for (let i = 0; i < M; i++) ms.push((await h.api.admin.addMember(h.a.id, { name: `Fan ${i}`, role: 'regular' })).id);
      const pf = (await h.post('/portfolios', { name: 'Budget portfolio', members: ms })).body;
      const p = await h.project({ name: 'Budget', portfolioId: pf.id, members: ms });
      const status = (await h.get(`/projects/${p.id}`)).body.defaultStatusId;
      expect((await h.patch(`/statuses/${status}`, { assignees: ms })).status).toBe(200);
      const list = (await h.post('/lists', { name: 'Budget list', projectId: p.id, statusId: status, assignees: ms })).body;
      const parent = await h.task(p.id, { name: 'Parent', listId: list.id, assignees: ms, subscribers: ms });
      child = await h.task(p.id, { name: 'Child', listId: list.id, parentTaskId: parent.id, dependencyId: parent.id, assignees: ms, subscribers: ms });
    });
    afterAll(() => h.close());

    const base = () => `/tasks?parentTaskId[eq]=${child.parentTaskId}&limit=1&fields[members]=name`;

    it('1,916 rows (19 fan-outs to 100 members plus 16 single hops) are materialised', async () => {
      const r = await h.get(`${base()}&expand=${PATHS.slice(0, 19).join(',')}`);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
      const row = r.body.data[0];
      expect(row.id).toBe(child.id);
      expect(row.assignees).toHaveLength(M);
      expect(row.assignees[0]).toEqual({ id: expect.any(String), name: expect.stringMatching(/^Fan /) });
      expect(row.list.status.project.members).toHaveLength(M);
      expect(row.parentTask.list.assignees).toHaveLength(M);
      expect(row.dependency.assignees).toHaveLength(M);
    });

    it('more than 2,000 rows is expand_budget_exceeded with relation and budget', async () => {
      const r = await h.get(`${base()}&expand=${PATHS.join(',')}`);
      expectProblem(r, 400, 'expand_budget_exceeded', { budget: 2000 });
      expect(['assignees', 'subscribers', 'members']).toContain(r.body.relation);
    });
  });

  // -------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 8: fields[resource]`, () => {
    let h: Harness;
    let p: any;
    let task: any;
    beforeAll(async () => {
      h = await harness(factory);
      p = await h.project({ name: 'Fields' });
      task = await h.task(p.id, { name: 'Only name', assignees: [h.a.owner.id] });
    });
    afterAll(() => h.close());

    it('fields[tasks]=name keeps id and name only', async () => {
      const r = await h.get(`/tasks?projectId=${p.id}&fields[tasks]=name`);
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual([{ id: task.id, name: 'Only name' }]);
      const one = await h.get(`/tasks/${task.id}?fields[tasks]=name`);
      expect(one.body).toEqual({ id: task.id, name: 'Only name' });
      const two = await h.get(`/tasks/${task.id}?fields[tasks]=name,assignees`);
      expect(two.body).toEqual({ id: task.id, name: 'Only name', assignees: [h.a.owner.id] });
    });

    it('expanded relations are kept beside the selected fields', async () => {
      const r = await h.get(`/tasks?projectId=${p.id}&fields[tasks]=name&expand=project`);
      expect(Object.keys(r.body.data[0]).sort()).toEqual(['id', 'name', 'project']);
      expect(r.body.data[0].project).toMatchObject({ id: p.id, name: 'Fields', niceId: p.niceId });
    });

    it('fields on an expanded resource apply there (fields[projects]=name with expand=project)', async () => {
      const r = await h.get(`/tasks?projectId=${p.id}&fields[projects]=name&expand=project`);
      expect(r.status).toBe(200);
      const row = r.body.data[0];
      expect(row.project).toEqual({ id: p.id, name: 'Fields' });
      expect(row.projectId).toBe(p.id);
      expect(row.niceId).toBe(task.niceId);
      const both = await h.get(`/tasks/${task.id}?fields[projects]=initials&fields[tasks]=name&expand=project`);
      expect(both.body).toEqual({ id: task.id, name: 'Only name', project: { id: p.id, initials: p.initials } });
    });

    it('an unknown field or resource is invalid_field_selector', async () => {
      expectProblem(await h.get(`/tasks?fields[tasks]=bogus`), 400, 'invalid_field_selector');
      expectProblem(await h.get(`/tasks?fields[tasks]=name,bogus`), 400, 'invalid_field_selector');
      expectProblem(await h.get(`/tasks?fields[bogus]=name`), 400, 'invalid_field_selector');
      expectProblem(await h.get(`/tasks/${task.id}?fields[task]=name`), 400, 'invalid_field_selector');
      expectProblem(await h.get(`/tasks/${task.id}?fields[projects]=dueAt&expand=project`), 400, 'invalid_field_selector');
    });
  });

  // -------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations: GET /{resource}/{id} query parameters`, () => {
    let h: Harness;
    let p: any;
    let task: any;
    beforeAll(async () => {
      h = await harness(factory);
      p = await h.project({ name: 'Get params' });
      task = await h.task(p.id);
    });
    afterAll(() => h.close());

    it('an unknown query parameter on a single read is invalid_query_param', async () => {
      expectProblem(await h.get(`/tasks/${task.id}?bogus=1`), 400, 'invalid_query_param', { name: 'bogus' });
      expectProblem(await h.get(`/projects/${p.id}?limit=5`), 400, 'invalid_query_param', { name: 'limit' });
      expectProblem(await h.get(`/tasks/${task.id}?name[eq]=x`), 400, 'invalid_query_param', { name: 'name[eq]' });
      const ok = await h.get(`/tasks/${task.id}?expand=project`);
      expect(ok.status).toBe(200);
      expect(ok.body.project.id).toBe(p.id);
    });
  });
}
