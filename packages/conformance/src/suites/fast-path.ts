import { describe, it, expect } from 'vitest';
import type { StoreFactory } from '../kit';
import { bothPaths, harnessPerDescribe, rowsTwin } from './shared';

/**
 * Issue 11: where the store builds a page's JSON itself, the bytes are those
 * the rows path prints — for the values where SQL and JavaScript print
 * differently: reals (`2.0` vs `2`, `1.0e+21`, 17 digits), instants before
 * 1970 or at the edge of year 9999, text with escapes, JSON columns.
 */
export function fastPathSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] the read fast path prints values as the rows path does`, () => {
    const H = harnessPerDescribe(factory);

    it('reals, instants, booleans, text escapes and JSON columns: list bytes equal, and each row equals its GET', async () => {
      const h = H();
      const p = await h.project({ name: 'Edge values' });
      const numbers = [0, 2, 0.1, 1 / 3, 123456.789, 1e21, 5e-324, 1e-7, 2 ** 53 + 2, 1e15, 999999999999999.9, 0.30000000000000004];
      const instants = ['1970-01-01T00:00:00.000Z', '1969-07-20T20:17:40.123Z', '9999-12-31T23:59:59.999Z', '2026-01-01T00:00:00.001+05:30', '0001-01-01T00:00:00.000Z'];
      // Short and long (over 64 characters), with and without what JSON escapes: a store that writes rows as bytes
      // writes plain ASCII itself and hands the rest to JSON.stringify.
      const texts = ['plain', 'quote " and \\ backslash', 'tab\tnew\nline\r\u0001\u001f\u007f', 'emoji 😀 and \u2028\u2029', 'é ü ß 漢字', '</script>',
        'long plain ascii '.repeat(6), `${'long with "quotes" and \\ '.repeat(4)}😀 é`];
      // customFields entries must name a custom field of the workspace (a text field takes any string).
      const cf = await h.post('/custom-fields', { name: 'Edge text', type: 'text' });
      expect(cf.status, JSON.stringify(cf.body)).toBe(201);
      for (let i = 0; i < numbers.length; i++) {
        const body: Record<string, unknown> = {
          name: texts[i % texts.length],
          description: i % 3 === 0 ? null : texts[(i + 1) % texts.length],
          storyPoints: numbers[i],
          estimate: i % 2 ? numbers[numbers.length - 1 - i] : null,
          completed: i % 2 === 0,
          customFields: i % 4 === 0 ? null : [{ customFieldId: cf.body.id, value: texts[i % texts.length] }],
        };
        const at = instants[i % instants.length];
        const r = await h.post('/tasks', { projectId: p.id, ...body, dueAt: at });
        if (r.status !== 201) {
          // an instant the API refuses is not a value to print; create without it
          expect(r.status, JSON.stringify(r.body)).toBe(400);
          const again = await h.post('/tasks', { projectId: p.id, ...body });
          expect(again.status, JSON.stringify(again.body)).toBe(201);
        }
      }
      const twin = await rowsTwin(h);
      const { fast, rows, tookFastPath } = await bothPaths(h, twin, `/tasks?projectId=${p.id}&limit=200`, h.a.owner.token);
      expect(fast.status).toBe(200);
      expect(fast.body).toBe(rows.body);
      expect(tookFastPath).toBe(!!h.store.dialect.jsonObject);
      const data = JSON.parse(fast.body as string).data as any[];
      expect(data.length).toBe(numbers.length);
      expect(data.map((t) => t.storyPoints).sort()).toEqual([...numbers].sort());
      for (const t of data) {
        const one = await twin.handle({ method: 'GET', url: `/api/v3/tasks/${t.id}`, headers: { authorization: `Bearer ${h.a.owner.token}` } });
        expect(JSON.stringify(t)).toBe(one.body);
      }
    });

    it('relation id arrays: the database lists them in link order (created_at, then id), as the rows path does', async () => {
      const h = H();
      const p = await h.project({ name: 'Relations' });
      const labels: string[] = [];
      for (const name of ['rel-c', 'rel-a', 'rel-b', 'rel-d']) {
        const r = await h.post('/labels', { name });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        labels.push(r.body.id);
      }
      const [first, ...rest] = labels;
      const sameInstant = [...rest].sort();
      // Three labels linked in one instant (ordered by id), then one more later (last, whatever its id).
      const t = await h.post('/tasks', { projectId: p.id, name: 'linked', labels: rest, assignees: [h.a.regular.id, h.a.owner.id] });
      expect(t.status, JSON.stringify(t.body)).toBe(201);
      h.clock.advance(1000);
      expect((await h.post(`/tasks/${t.body.id}/labels`, { ids: [first] })).status).toBe(200);
      await h.post('/tasks', { projectId: p.id, name: 'bare' });
      const twin = await rowsTwin(h);
      for (const url of [`/tasks?projectId=${p.id}`, `/tasks?projectId=${p.id}&fields[tasks]=labels`, `/tasks?projectId=${p.id}&fields[tasks]=name`]) {
        const { fast, rows, tookFastPath } = await bothPaths(h, twin, url, h.a.owner.token);
        expect(fast.status).toBe(200);
        expect(fast.body).toBe(rows.body);
        expect(tookFastPath).toBe(!!h.store.dialect.jsonObject);
      }
      const data = JSON.parse((await bothPaths(h, twin, `/tasks?projectId=${p.id}`, h.a.owner.token)).fast.body as string).data as any[];
      const linked = data.find((x) => x.name === 'linked');
      expect(linked.labels).toEqual([...sameInstant, first]);
      expect(linked.assignees).toEqual([h.a.owner.id, h.a.regular.id].sort());
      expect(data.find((x) => x.name === 'bare').labels).toEqual([]);
      // One task read and a write's answer show the same arrays: where the store reads a row's relations
      // with one subquery (Postgres, allLinkIds), each relation's ids are split out of it in link order.
      const one = await h.get(`/tasks/${t.body.id}`);
      const patched = await h.patch(`/tasks/${t.body.id}`, { name: 'linked, renamed' });
      const expanded = await h.get(`/tasks?projectId=${p.id}&expand=assignees`);
      for (const shown of [one.body, patched.body, expanded.body.data.find((x: any) => x.id === t.body.id)]) {
        expect(shown.labels).toEqual([...sameInstant, first]);
        expect(shown.assignees.map((a: any) => (typeof a === 'string' ? a : a.id))).toEqual([h.a.owner.id, h.a.regular.id].sort());
        expect(shown.subscribers).toEqual(linked.subscribers);
      }
    });

    it('a PATCH answers the record as stored: the bytes a GET then shows, and its event carries the same record', async () => {
      // Where the update is held to leave with the commit (Postgres), the answer is the row read under its lock with the
      // patch over it, never read back: for reals, instants, texts, nulls, booleans and relations it must be what is stored.
      const h = H();
      const p = await h.project({ name: 'Patched values' });
      const labels: string[] = [];
      for (const name of ['patch-b', 'patch-a']) labels.push((await h.post('/labels', { name })).body.id);
      const cf = await h.post('/custom-fields', { name: 'Patched text', type: 'text' });
      expect(cf.status, JSON.stringify(cf.body)).toBe(201);
      const t = await h.post('/tasks', { projectId: p.id, name: 'to patch', labels, assignees: [h.a.regular.id, h.a.owner.id], storyPoints: 2 });
      expect(t.status, JSON.stringify(t.body)).toBe(201);
      const patches: Array<Record<string, unknown>> = [
        { name: 'quote " and \\ backslash, emoji 😀', storyPoints: 1 / 3, estimate: 1e21, dueAt: '1969-07-20T20:17:40.123Z', completed: true, description: null },
        { name: 'long plain ascii '.repeat(6), storyPoints: 0, estimate: null, dueAt: '2026-01-01T00:00:00.001+05:30', completed: false, description: '</script>\u2028' },
        { storyPoints: 0.30000000000000004, dueAt: null, description: 'tab\tnew\nline' },
        { customFields: [{ customFieldId: cf.body.id, value: 'é ü ß 漢字' }], name: 'with a JSON value' },
        { labels: [labels[1]], name: 'a relation changed' },
        { name: 'after the relation', estimate: 5e-324 },
      ];
      const auth = { authorization: `Bearer ${h.a.owner.token}` };
      const text = (b: unknown) => (typeof b === 'string' ? b : new TextDecoder().decode(b as Uint8Array));
      for (const body of patches) {
        h.clock.advance(1000);
        const patched = await h.api.handle({ method: 'PATCH', url: `/api/v3/tasks/${t.body.id}`, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect(patched.status, text(patched.body)).toBe(200);
        const read = await h.api.handle({ method: 'GET', url: `/api/v3/tasks/${t.body.id}`, headers: auth });
        expect(text(patched.body), JSON.stringify(body)).toBe(text(read.body));
        const event = (await h.outbox()).filter((e: any) => e.type === 'task.updated').at(-1);
        expect(event.payload.task).toEqual(JSON.parse(text(read.body)));
      }
      const last = JSON.parse(text((await h.api.handle({ method: 'GET', url: `/api/v3/tasks/${t.body.id}`, headers: auth })).body));
      expect(last).toMatchObject({ name: 'after the relation', labels: [labels[1]], estimate: 5e-324, storyPoints: 0.30000000000000004, dueAt: null });
      expect(last.assignees).toEqual([h.a.owner.id, h.a.regular.id].sort());
    });

    it('expand (one and many hops, with field selections, for each role): the same bytes as the rows path, one query per hop', async () => {
      const h = H();
      const p = await h.project({ name: 'Expanded' });
      const label = await h.post('/labels', { name: 'expand-label' });
      for (let i = 0; i < 4; i++) {
        const r = await h.post('/tasks', { projectId: p.id, name: `t${i}`, assignees: i % 2 ? [h.a.regular.id, h.a.owner.id] : [], labels: i === 2 ? [label.body.id] : [] });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }
      const twin = await rowsTwin(h);
      const base = `/tasks?projectId=${p.id}`;
      const views = [
        `${base}&expand=assignees,status,project`,
        `${base}&expand=project,assignees`,
        `${base}&expand=labels&fields[tasks]=name`,
        `${base}&expand=assignees&fields[tasks]=assignees,name&fields[members]=name`,
        `${base}&expand=status&fields[statuses]=name,color&limit=2`,
        `${base}&expand=createdBy,createdByActor`,
      ];
      for (const as of [h.a.owner.token, h.a.regular.token, h.a.client.token]) {
        for (const url of views) {
          const { fast, rows, tookFastPath } = await bothPaths(h, twin, url, as);
          expect({ url, status: fast.status, body: fast.body }).toEqual({ url, status: rows.status, body: rows.body });
          // Where the database builds the JSON the statements differ; a store that prints rows runs the rows path's statements (hops in any order).
          if (fast.status === 200 && h.store.dialect.jsonObject) expect(tookFastPath, url).toBe(true);
        }
      }
      // One statement for the page and one per hop (authentication aside); a store that remembers the rows a hop
      // read while nothing changed them (SqlStore.changeStamp: SQLite) reads them again only once one may have changed.
      const q = await h.countQueries(() => h.get(`${base}&expand=assignees,status,project`));
      const selects = q.filter((x) => /^select/i.test(x.trim())).length;
      if (h.store.changeStamp) expect(selects).toBeLessThan(1 + 1 + 3);
      else expect(selects).toBe(1 + 1 + 3);
    });

    it('expand after the related rows changed (names, links, roles, trash): the new rows, the same bytes as the rows path', async () => {
      const h = H();
      const p = await h.project({ name: 'Before' });
      const t = await h.post('/tasks', { projectId: p.id, name: 'watched', assignees: [h.a.regular.id] });
      expect(t.status, JSON.stringify(t.body)).toBe(201);
      const twin = await rowsTwin(h);
      const url = `/tasks?projectId=${p.id}&expand=assignees,status,project`;
      const same = async () => {
        const { fast, rows } = await bothPaths(h, twin, url, h.a.owner.token);
        expect(fast.status).toBe(200);
        expect(fast.body).toBe(rows.body);
        return JSON.parse(fast.body as string).data.find((x: any) => x.id === t.body.id);
      };
      // Read twice: where rows are remembered, the second answer comes from what the first read.
      await same();
      const before = await same();
      expect([before.project.name, before.assignees.map((a: any) => a.id)]).toEqual(['Before', [h.a.regular.id]]);
      expect((await h.patch(`/projects/${p.id}`, { name: 'After' })).status).toBe(200);
      expect((await same()).project.name).toBe('After');
      const statusId = before.status.id;
      const renamed = await h.patch(`/statuses/${statusId}`, { name: 'Renamed status' });
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      expect((await same()).status.name).toBe('Renamed status');
      // A link of the related row (the project's members) changes its JSON too.
      const membersBefore = (await same()).project.members;
      const members = membersBefore.includes(h.a.regular.id) ? membersBefore.filter((m: string) => m !== h.a.regular.id) : [...membersBefore, h.a.regular.id];
      const changed = await h.patch(`/projects/${p.id}`, { members });
      expect(changed.status, JSON.stringify(changed.body)).toBe(200);
      expect(changed.body.members).not.toEqual(membersBefore);
      expect((await same()).project.members).toEqual(changed.body.members);
      for (const role of ['manager', 'regular']) {
        const member = await h.patch(`/members/${h.a.regular.id}`, { role });
        expect(member.status, JSON.stringify(member.body)).toBe(200);
        expect((await same()).assignees.map((a: any) => a.role)).toEqual([role]);
      }
      // Trashed: the hop finds no project (null), as the rows path shows it.
      expect((await h.del(`/projects/${p.id}`)).status).toBe(204);
      const trashed = await h.get(url);
      expect(trashed.status).toBe(200);
      expect(trashed.body.data.map((x: any) => x.project)).toEqual([null]);
    });
  });
}
