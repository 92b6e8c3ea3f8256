import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';
import { eventCatalog } from '@pmapi/core';

/**
 * Custom fields (spec "Other resources": a named resource whose fields are
 * not shown) and the `customFields` entries lists, tasks and projects carry
 * (spec "List", "Task", "Project": {customFieldId, value}, value always a
 * string, empty string clears, at most 50 entries per request), with the
 * project's column keys (hiddenListColumns, listColumnsOrder,
 * customFieldsOrder, taskCustomFieldsOrder, listCustomFieldsOrder). The
 * design where the spec is silent is docs/not-shown.md "Custom fields".
 */

const DAY = 24 * 60 * 60 * 1000;
const BUILTIN = ['name', 'assignee', 'dueDate', 'status', 'list', 'labels', 'estimate'];

async function field(h: Harness, body: Record<string, unknown>, token?: string): Promise<any> {
  return ok(await h.post('/custom-fields', { type: 'text', ...body }, { token }), 201);
}

async function list(h: Harness, projectId: string, body: Record<string, unknown> = {}): Promise<any> {
  return ok(await h.post('/lists', { name: 'A list', projectId, ...body }), 201);
}

const ids = (r: any): string[] => (r.data as any[]).map((x) => x.id);

export function customFieldsSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Custom field (Other resources; not shown: name, type, options, description, projectId)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    beforeAll(async () => {
      p = await H().project({ name: 'CF fields P', members: [H().a.regular.id, H().a.client.id] });
      q = await H().project({ name: 'CF fields Q' });
    });

    it('POST /custom-fields → 201 with the trimmed name, type, description null, options [] and projectId null (workspace-wide); GET answers the same', async () => {
      const c = await field(H(), { name: '  Budget code \t', type: 'text' });
      expect(c).toMatchObject({ name: 'Budget code', type: 'text', description: null, options: [], projectId: null });
      expect(c.id).toBeTypeOf('string');
      expect(c.createdAt).toBeTypeOf('string');
      expect(ok(await H().get(`/custom-fields/${c.id}`))).toEqual(c);
      const u = ok(await H().patch(`/custom-fields/${c.id}`, { name: ' Cost centre ', description: 'Where it is billed' }));
      expect(u).toMatchObject({ name: 'Cost centre', description: 'Where it is billed' });
    });

    it('name is required, 1-100 characters after trimming (create and update)', async () => {
      invalid(await H().post('/custom-fields', { type: 'text' }), 'name', 'required');
      invalid(await H().post('/custom-fields', { name: '   ', type: 'text' }), 'name');
      invalid(await H().post('/custom-fields', { name: 'n'.repeat(101), type: 'text' }), 'name');
      const c = await field(H(), { name: `  ${'n'.repeat(100)}  ` });
      expect(c.name).toBe('n'.repeat(100));
      invalid(await H().patch(`/custom-fields/${c.id}`, { name: 'm'.repeat(101) }), 'name');
      invalid(await H().patch(`/custom-fields/${c.id}`, { name: null }), 'name');
      expect(ok(await H().get(`/custom-fields/${c.id}`)).name).toBe('n'.repeat(100));
    });

    it('type is required, one of text, number, date, dropdown, checkbox, url, email, and fixed at creation (immutable)', async () => {
      invalid(await H().post('/custom-fields', { name: 'No type' }), 'type', 'required');
      invalid(await H().post('/custom-fields', { name: 'Odd type', type: 'rating' }), 'type');
      for (const type of ['text', 'number', 'date', 'dropdown', 'checkbox', 'url', 'email']) {
        expect((await field(H(), { name: `Of type ${type}`, type })).type).toBe(type);
      }
      const c = await field(H(), { name: 'Fixed type', type: 'number' });
      invalid(await H().patch(`/custom-fields/${c.id}`, { type: 'text' }), 'type', 'immutable');
      expect(ok(await H().patch(`/custom-fields/${c.id}`, { type: 'number', description: 'same type is fine' })).type).toBe('number');
    });

    it('description: at most 5,000 characters, null allowed', async () => {
      invalid(await H().post('/custom-fields', { name: 'Long desc', description: 'd'.repeat(5001) }), 'description');
      const c = await field(H(), { name: 'Desc ok', description: 'd'.repeat(5000) });
      expect(ok(await H().patch(`/custom-fields/${c.id}`, { description: null })).description).toBeNull();
    });

    it('options: only dropdowns have them; each gets an id, labels are trimmed and unique (case-insensitive), colours lowercase; at most 100', async () => {
      const d = await field(H(), { name: 'Priority', type: 'dropdown', options: [{ label: ' High ', color: '#FF0000' }, { label: 'Low' }] });
      expect(d.options).toHaveLength(2);
      expect(d.options[0]).toEqual({ id: expect.any(String), label: 'High', color: '#ff0000' });
      expect(d.options[1]).toEqual({ id: expect.any(String), label: 'Low', color: null });
      expect(d.options[0].id).not.toBe(d.options[1].id);
      invalid(await H().post('/custom-fields', { name: 'Dup labels', type: 'dropdown', options: [{ label: 'A' }, { label: 'a' }] }), 'options.1.label', 'duplicate');
      invalid(await H().post('/custom-fields', { name: 'Text with options', type: 'text', options: [{ label: 'A' }] }), 'options', 'not_allowed');
      invalid(await H().post('/custom-fields', { name: 'Ghost option', type: 'dropdown', options: [{ id: 'nosuchoption1', label: 'A' }] }), 'options.0.id', 'unknown_option');
      invalid(await H().post('/custom-fields', { name: 'Blank option', type: 'dropdown', options: [{ label: '  ' }] }), 'options.0.label');
      invalid(await H().post('/custom-fields', { name: 'Extra key', type: 'dropdown', options: [{ label: 'A', weight: 1 }] }), 'options.0');
      invalid(await H().post('/custom-fields', { name: 'Too many', type: 'dropdown', options: Array.from({ length: 101 }, (_, i) => ({ label: `o${i}` })) }), 'options');
      expect((await field(H(), { name: 'Hundred', type: 'dropdown', options: Array.from({ length: 100 }, (_, i) => ({ label: `o${i}` })) })).options).toHaveLength(100);
      expect((await field(H(), { name: 'Empty dropdown', type: 'dropdown' })).options).toEqual([]);
    });

    it('options on update REPLACE the set: sent ids keep their option (relabelled), new ones get ids, omitted ones go; an id of another field is unknown_option', async () => {
      const d = await field(H(), { name: 'Stage', type: 'dropdown', options: [{ label: 'Draft' }, { label: 'Final' }] });
      const other = await field(H(), { name: 'Other stage', type: 'dropdown', options: [{ label: 'X' }] });
      const u = ok(await H().patch(`/custom-fields/${d.id}`, { options: [{ id: d.options[1].id, label: 'Done' }, { label: 'Review' }] }));
      expect(u.options.map((o: any) => o.label)).toEqual(['Done', 'Review']);
      expect(u.options[0].id).toBe(d.options[1].id);
      expect(u.options.map((o: any) => o.id)).not.toContain(d.options[0].id);
      invalid(await H().patch(`/custom-fields/${d.id}`, { options: [{ id: other.options[0].id, label: 'Stolen' }] }), 'options.0.id', 'unknown_option');
      invalid(await H().patch(`/custom-fields/${d.id}`, { options: [{ id: u.options[0].id, label: 'A' }, { id: u.options[0].id, label: 'B' }] }), 'options.1.id', 'duplicate');
      expect(ok(await H().get(`/custom-fields/${d.id}`)).options).toEqual(u.options);
    });

    it('projectId attaches a field to one project; it is fixed at creation; a project of another workspace (or none) is 404 resource_not_found naming projectId', async () => {
      const c = await field(H(), { name: 'Only in P', projectId: p.id });
      expect(c.projectId).toBe(p.id);
      invalid(await H().patch(`/custom-fields/${c.id}`, { projectId: q.id }), 'projectId', 'immutable');
      invalid(await H().patch(`/custom-fields/${c.id}`, { projectId: null }), 'projectId', 'immutable');
      const pb = await H().project({ name: 'Beta CF' }, H().b.owner.token);
      expect(problem(await H().post('/custom-fields', { name: 'Cross', type: 'text', projectId: pb.id }), 404, 'resource_not_found').field).toBe('projectId');
      expect(problem(await H().post('/custom-fields', { name: 'Ghost', type: 'text', projectId: 'nosuchproject00' }), 404, 'resource_not_found').field).toBe('projectId');
    });

    it('a name is unique among the fields a project shows: 409 conflict against a workspace-wide field or one of the same project; two projects may each have one', async () => {
      await field(H(), { name: 'Shared name' });
      problem(await H().post('/custom-fields', { name: 'Shared name', type: 'number' }), 409, 'conflict');
      problem(await H().post('/custom-fields', { name: 'Shared name', type: 'number', projectId: p.id }), 409, 'conflict');
      await field(H(), { name: 'Per project', projectId: p.id });
      await field(H(), { name: 'Per project', projectId: q.id });
      problem(await H().post('/custom-fields', { name: 'Per project', type: 'text', projectId: p.id }), 409, 'conflict');
      // A workspace-wide field would show beside both.
      problem(await H().post('/custom-fields', { name: 'Per project', type: 'text' }), 409, 'conflict');
      const c = await field(H(), { name: 'Rename me' });
      expect(problem(await H().patch(`/custom-fields/${c.id}`, { name: 'Shared name' }), 409, 'conflict').field).toBe('name');
      expect(ok(await H().patch(`/custom-fields/${c.id}`, { name: 'Rename me' })).name).toBe('Rename me');
    });

    it('project access: a field of a project the caller cannot open is 403 project_access_denied and never listed; workspace-wide fields are seen by every member', async () => {
      const hidden = await field(H(), { name: 'Q only', projectId: q.id });
      const open = await field(H(), { name: 'Everyone sees' });
      problem(await H().get(`/custom-fields/${hidden.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');
      const seen = ids(ok(await H().get('/custom-fields?limit=200', { token: H().a.regular.token })));
      expect(seen).toContain(open.id);
      expect(seen).not.toContain(hidden.id);
      expect(ids(ok(await H().get('/custom-fields?limit=200', { token: H().a.client.token })))).toContain(open.id);
      problem(await H().post('/custom-fields', { name: 'Into Q', type: 'text', projectId: q.id }, { token: H().a.regular.token }), 403, 'project_access_denied');
    });

    it('roles: regular members create and change fields but do not delete them; clients (guests) only read', async () => {
      const c = await field(H(), { name: 'By regular' }, H().a.regular.token);
      ok(await H().patch(`/custom-fields/${c.id}`, { description: 'edited' }, { token: H().a.regular.token }));
      problem(await H().del(`/custom-fields/${c.id}`, { token: H().a.regular.token }), 403, 'permission_denied');
      problem(await H().post('/custom-fields', { name: 'By client', type: 'text' }, { token: H().a.client.token }), 403, 'permission_denied');
      problem(await H().patch(`/custom-fields/${c.id}`, { name: 'Client edit' }, { token: H().a.client.token }), 403, 'permission_denied');
      expect(ok(await H().get(`/custom-fields/${c.id}`, { token: H().a.client.token })).name).toBe('By regular');
      ok(await H().del(`/custom-fields/${c.id}`), 204);
      problem(await H().get(`/custom-fields/${c.id}`), 404, 'resource_not_found');
    });

    it('another workspace\'s fields are unknown ids: 404 on GET, PATCH and DELETE; never listed', async () => {
      const cb = await field(H(), { name: 'Beta field' }, H().b.owner.token);
      problem(await H().get(`/custom-fields/${cb.id}`), 404, 'resource_not_found');
      problem(await H().patch(`/custom-fields/${cb.id}`, { name: 'Hijack' }), 404, 'resource_not_found');
      problem(await H().del(`/custom-fields/${cb.id}`), 404, 'resource_not_found');
      expect(ids(ok(await H().get('/custom-fields?limit=200')))).not.toContain(cb.id);
      expect(ok(await H().get(`/custom-fields/${cb.id}`, { token: H().b.owner.token })).name).toBe('Beta field');
    });

    it('list: default sort name; filters type[eq|in], projectId[eq|null] (a project\'s own fields, the workspace-wide ones)', async () => {
      const h = H();
      const own = await field(h, { name: 'aaa own of P', type: 'date', projectId: p.id });
      const wide = await field(h, { name: 'aaa workspace', type: 'checkbox' });
      const all = ok(await h.get('/custom-fields?limit=200')).data as any[];
      const names = all.map((x) => x.name);
      expect(names).toEqual([...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      const mine = ids(ok(await h.get(`/custom-fields?projectId[eq]=${p.id}&limit=200`)));
      expect(mine).toContain(own.id);
      expect(mine).not.toContain(wide.id);
      const wideOnes = ids(ok(await h.get('/custom-fields?projectId[null]=true&limit=200')));
      expect(wideOnes).toContain(wide.id);
      expect(wideOnes).not.toContain(own.id);
      expect(ids(ok(await h.get('/custom-fields?type[in]=date,checkbox&limit=200')))).toEqual(expect.arrayContaining([own.id, wide.id]));
      expect(ids(ok(await h.get('/custom-fields?type[eq]=checkbox&limit=200')))).not.toContain(own.id);
    });
  });

  describe(`[${factory.name}] v3 Custom field: at most 100 workspace-wide fields and 100 of a project's own`, () => {
    const H = harnessPerDescribe(factory);

    it('the 101st workspace-wide field is 400 validation_failed (custom_field_cap_reached on projectId); a project\'s own fields count apart', async () => {
      const h = H();
      for (let i = 0; i < 100; i++) await field(h, { name: `wide ${i}` });
      invalid(await h.post('/custom-fields', { name: 'wide 100', type: 'text' }), 'projectId', 'custom_field_cap_reached');
      const p = await h.project({ name: 'Cap P' });
      for (let i = 0; i < 100; i++) await field(h, { name: `own ${i}`, projectId: p.id });
      invalid(await h.post('/custom-fields', { name: 'own 100', type: 'text', projectId: p.id }), 'projectId', 'custom_field_cap_reached');
      const other = await h.project({ name: 'Cap Q' });
      await field(h, { name: 'own 100', projectId: other.id });
    });
  });

  describe(`[${factory.name}] v3 List: customFields (entries {customFieldId, value}; value always a string; empty string clears)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    const f: Record<string, any> = {};
    beforeAll(async () => {
      const h = H();
      p = await h.project({ name: 'CF lists P' });
      q = await h.project({ name: 'CF lists Q' });
      f.text = await field(h, { name: 'Text', type: 'text' });
      f.number = await field(h, { name: 'Number', type: 'number' });
      f.date = await field(h, { name: 'Date', type: 'date' });
      f.dropdown = await field(h, { name: 'Dropdown', type: 'dropdown', options: [{ label: 'Red' }, { label: 'Blue' }] });
      f.checkbox = await field(h, { name: 'Checkbox', type: 'checkbox' });
      f.url = await field(h, { name: 'Url', type: 'url' });
      f.email = await field(h, { name: 'Email', type: 'email' });
      f.ofP = await field(h, { name: 'Of P', type: 'text', projectId: p.id });
      f.ofQ = await field(h, { name: 'Of Q', type: 'text', projectId: q.id });
    });

    it('create stores the entries; GET answers them; a list without any answers []', async () => {
      const l = await list(H(), p.id, { customFields: [{ customFieldId: f.text.id, value: 'hello' }, { customFieldId: f.ofP.id, value: 'mine' }] });
      expect(l.customFields).toEqual([{ customFieldId: f.text.id, value: 'hello' }, { customFieldId: f.ofP.id, value: 'mine' }]);
      expect(ok(await H().get(`/lists/${l.id}`)).customFields).toEqual(l.customFields);
      expect((await list(H(), p.id)).customFields).toEqual([]);
    });

    it('update merges by customFieldId: named fields change, others stay, "" clears one, new ones are appended; null clears all', async () => {
      const l = await list(H(), p.id, { customFields: [{ customFieldId: f.text.id, value: 'a' }, { customFieldId: f.number.id, value: '1' }] });
      const u = ok(await H().patch(`/lists/${l.id}`, { customFields: [{ customFieldId: f.number.id, value: '2.5' }, { customFieldId: f.checkbox.id, value: 'true' }] }));
      expect(u.customFields).toEqual([{ customFieldId: f.text.id, value: 'a' }, { customFieldId: f.number.id, value: '2.5' }, { customFieldId: f.checkbox.id, value: 'true' }]);
      const cleared = ok(await H().patch(`/lists/${l.id}`, { customFields: [{ customFieldId: f.text.id, value: '' }] }));
      expect(cleared.customFields).toEqual([{ customFieldId: f.number.id, value: '2.5' }, { customFieldId: f.checkbox.id, value: 'true' }]);
      // Clearing a field without a value changes nothing.
      expect(ok(await H().patch(`/lists/${l.id}`, { customFields: [{ customFieldId: f.url.id, value: '' }] })).customFields).toEqual(cleared.customFields);
      expect(ok(await H().patch(`/lists/${l.id}`, { customFields: null })).customFields).toEqual([]);
      expect(ok(await H().get(`/lists/${l.id}`)).customFields).toEqual([]);
    });

    it('an entry naming no custom field of this workspace (another workspace\'s too) is 404 resource_not_found naming customFields.N.customFieldId; nothing is written', async () => {
      const fb = await field(H(), { name: 'Beta text' }, H().b.owner.token);
      const l = await list(H(), p.id, { customFields: [{ customFieldId: f.text.id, value: 'keep' }] });
      const before = (await H().outbox()).length;
      for (const bad of ['nosuchfield000', fb.id]) {
        const r = problem(await H().patch(`/lists/${l.id}`, { name: 'renamed', customFields: [{ customFieldId: f.number.id, value: '3' }, { customFieldId: bad, value: 'x' }] }), 404, 'resource_not_found');
        expect(r.field).toBe('customFields.1.customFieldId');
        expect(problem(await H().post('/lists', { name: 'New', projectId: p.id, customFields: [{ customFieldId: bad, value: 'x' }] }), 404, 'resource_not_found').field).toBe('customFields.0.customFieldId');
      }
      expect((await H().outbox()).length).toBe(before);
      const got = ok(await H().get(`/lists/${l.id}`));
      expect(got.name).toBe('A list');
      expect(got.customFields).toEqual([{ customFieldId: f.text.id, value: 'keep' }]);
    });

    it('a field attached to another project is 400 validation_failed (not_attached on customFields.N.customFieldId); a project\'s own and workspace-wide fields are accepted', async () => {
      invalid(await H().post('/lists', { name: 'Wrong', projectId: p.id, customFields: [{ customFieldId: f.ofQ.id, value: 'x' }] }), 'customFields.0.customFieldId', 'not_attached');
      const l = await list(H(), q.id, { customFields: [{ customFieldId: f.ofQ.id, value: 'q' }, { customFieldId: f.text.id, value: 'w' }] });
      invalid(await H().patch(`/lists/${l.id}`, { customFields: [{ customFieldId: f.text.id, value: 'w2' }, { customFieldId: f.ofP.id, value: 'p' }] }), 'customFields.1.customFieldId', 'not_attached');
      expect(ok(await H().get(`/lists/${l.id}`)).customFields).toEqual([{ customFieldId: f.ofQ.id, value: 'q' }, { customFieldId: f.text.id, value: 'w' }]);
    });

    it('values must suit the field\'s type (invalid_value on customFields.N.value): number, date YYYY-MM-DD, dropdown option id, checkbox "true"/"false", http(s) URL, e-mail', async () => {
      const red = f.dropdown.options[0].id;
      const good: Array<[string, string]> = [
        ['number', '-12.5'], ['number', '42'], ['date', '2028-02-29'], ['dropdown', red], ['checkbox', 'false'],
        ['url', 'https://example.com/a?b=c'], ['email', 'ana@example.com'], ['text', 'anything at all, 42'],
      ];
      for (const [type, value] of good) {
        const l = await list(H(), p.id, { customFields: [{ customFieldId: f[type].id, value }] });
        expect(l.customFields, `${type} ${value}`).toEqual([{ customFieldId: f[type].id, value }]);
      }
      const bad: Array<[string, string]> = [
        ['number', 'abc'], ['number', '1e5'], ['number', '1,5'], ['number', ' 1'], ['date', '2026-02-29'], ['date', '2026-13-01'], ['date', '01/02/2026'],
        ['date', '2026-03-01T00:00:00Z'], ['dropdown', 'Red'], ['dropdown', 'nosuchoption1'], ['checkbox', 'yes'], ['checkbox', 'TRUE'],
        ['url', 'ftp://example.com'], ['url', 'not a url'], ['email', 'ana@'], ['email', 'ana example.com'],
      ];
      const l = await list(H(), p.id);
      for (const [type, value] of bad) {
        invalid(await H().post('/lists', { name: 'Bad', projectId: p.id, customFields: [{ customFieldId: f[type].id, value }] }), 'customFields.0.value', 'invalid_value');
        invalid(await H().patch(`/lists/${l.id}`, { customFields: [{ customFieldId: f.text.id, value: 'ok' }, { customFieldId: f[type].id, value }] }), 'customFields.1.value', 'invalid_value');
      }
      expect(ok(await H().get(`/lists/${l.id}`)).customFields).toEqual([]);
    });

    it('value is always a string; entries hold exactly customFieldId and value; one entry per field in a request (duplicate)', async () => {
      invalid(await H().post('/lists', { name: 'Num', projectId: p.id, customFields: [{ customFieldId: f.number.id, value: 5 }] }), 'customFields.0.value');
      invalid(await H().post('/lists', { name: 'Null', projectId: p.id, customFields: [{ customFieldId: f.text.id, value: null }] }), 'customFields.0.value');
      invalid(await H().post('/lists', { name: 'Missing', projectId: p.id, customFields: [{ customFieldId: f.text.id }] }), 'customFields.0.value');
      invalid(await H().post('/lists', { name: 'Extra', projectId: p.id, customFields: [{ customFieldId: f.text.id, value: 'x', label: 'y' }] }), 'customFields.0');
      invalid(await H().post('/lists', { name: 'Twice', projectId: p.id, customFields: [{ customFieldId: f.text.id, value: 'x' }, { customFieldId: f.text.id, value: 'y' }] }), 'customFields.1.customFieldId', 'duplicate');
    });

    it('expand=customFields answers each entry with its custom field record beside the value, in the list\'s order; it needs custom-fields:read', async () => {
      const l = await list(H(), p.id, { customFields: [{ customFieldId: f.dropdown.id, value: f.dropdown.options[1].id }, { customFieldId: f.ofP.id, value: 'v' }] });
      const got = ok(await H().get(`/lists/${l.id}?expand=customFields`));
      expect(got.customFields).toEqual([
        { customFieldId: f.dropdown.id, value: f.dropdown.options[1].id, customField: ok(await H().get(`/custom-fields/${f.dropdown.id}`)) },
        { customFieldId: f.ofP.id, value: 'v', customField: ok(await H().get(`/custom-fields/${f.ofP.id}`)) },
      ]);
      const page = ok(await H().get(`/lists?projectId=${p.id}&expand=customFields&limit=200`));
      const row = (page.data as any[]).find((x) => x.id === l.id);
      expect(row.customFields).toEqual(got.customFields);
      const narrow = await H().api.admin.issueToken(H().a.owner.id, { scopes: ['lists:read'] });
      problem(await H().get(`/lists/${l.id}?expand=customFields`, { token: narrow.token }), 403, 'permission_denied');
      expect(ok(await H().get(`/lists/${l.id}`, { token: narrow.token })).customFields).toEqual(l.customFields);
    });
  });

  describe(`[${factory.name}] v3 Task: customFields ({customFieldId, value}; max 50), kept only where their field is attached`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    let wide: any;
    let ofP: any;
    let ofQ: any;
    beforeAll(async () => {
      const h = H();
      p = await h.project({ name: 'CF tasks P', members: [h.a.client.id] });
      q = await h.project({ name: 'CF tasks Q' });
      wide = await field(h, { name: 'Wide', type: 'number' });
      ofP = await field(h, { name: 'P field', type: 'text', projectId: p.id });
      ofQ = await field(h, { name: 'Q field', type: 'text', projectId: q.id });
    });

    it('create, merge and clear on tasks as on lists; the updated event carries the merged entries', async () => {
      const t = await H().task(p.id, { customFields: [{ customFieldId: wide.id, value: '7' }] });
      expect(t.customFields).toEqual([{ customFieldId: wide.id, value: '7' }]);
      const { result, events } = await during(H(), () => H().patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: ofP.id, value: 'p' }] }));
      expect(ok(result).customFields).toEqual([{ customFieldId: wide.id, value: '7' }, { customFieldId: ofP.id, value: 'p' }]);
      expect(ofType(events, 'task.updated', t.id)[0].payload.task.customFields).toEqual(ok(result).customFields);
      expect(ok(await H().patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: wide.id, value: '' }] })).customFields).toEqual([{ customFieldId: ofP.id, value: 'p' }]);
      invalid(await H().patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: wide.id, value: 'seven' }] }), 'customFields.0.value', 'invalid_value');
      invalid(await H().post('/tasks', { name: 'Wrong', projectId: p.id, customFields: [{ customFieldId: ofQ.id, value: 'q' }] }), 'customFields.0.customFieldId', 'not_attached');
      expect(problem(await H().post('/tasks', { name: 'Ghost', projectId: p.id, customFields: [{ customFieldId: 'nosuchfield000', value: 'q' }] }), 404, 'resource_not_found').field).toBe('customFields.0.customFieldId');
    });

    it('a subtask created under a parent is checked against the parent\'s project', async () => {
      const parent = await H().task(q.id);
      invalid(await H().post('/tasks', { name: 'Sub', parentTaskId: parent.id, customFields: [{ customFieldId: ofP.id, value: 'p' }] }), 'customFields.0.customFieldId', 'not_attached');
      const sub = ok(await H().post('/tasks', { name: 'Sub', parentTaskId: parent.id, customFields: [{ customFieldId: ofQ.id, value: 'q' }] }), 201);
      expect(sub.customFields).toEqual([{ customFieldId: ofQ.id, value: 'q' }]);
    });

    it('moving a task (and its subtasks) to another project drops the values of fields not attached there and keeps workspace-wide ones', async () => {
      const t = await H().task(p.id, { customFields: [{ customFieldId: wide.id, value: '1' }, { customFieldId: ofP.id, value: 'p' }] });
      const sub = await H().task(p.id, { parentTaskId: t.id, customFields: [{ customFieldId: ofP.id, value: 'sub' }, { customFieldId: wide.id, value: '2' }] });
      const moved = ok(await H().patch(`/tasks/${t.id}`, { projectId: q.id }));
      expect(moved.customFields).toEqual([{ customFieldId: wide.id, value: '1' }]);
      expect(ok(await H().get(`/tasks/${sub.id}`)).customFields).toEqual([{ customFieldId: wide.id, value: '2' }]);
      // Moving with values for the target's fields: checked against the target.
      const t2 = await H().task(p.id, { customFields: [{ customFieldId: ofP.id, value: 'p' }] });
      invalid(await H().patch(`/tasks/${t2.id}`, { projectId: q.id, customFields: [{ customFieldId: ofP.id, value: 'still' }] }), 'customFields.0.customFieldId', 'not_attached');
      const t2moved = ok(await H().patch(`/tasks/${t2.id}`, { projectId: q.id, customFields: [{ customFieldId: ofQ.id, value: 'q' }] }));
      expect(t2moved.customFields).toEqual([{ customFieldId: ofQ.id, value: 'q' }]);
    });

    it('expand=customFields works on tasks (GET and list); a client (guest) reads it too', async () => {
      const t = await H().task(p.id, { customFields: [{ customFieldId: ofP.id, value: 'x' }, { customFieldId: wide.id, value: '3' }] });
      const got = ok(await H().get(`/tasks/${t.id}?expand=customFields`, { token: H().a.client.token }));
      expect(got.customFields.map((e: any) => [e.customFieldId, e.value, e.customField.id, e.customField.name])).toEqual([[ofP.id, 'x', ofP.id, 'P field'], [wide.id, '3', wide.id, 'Wide']]);
      const page = ok(await H().get(`/tasks?projectId=${p.id}&expand=customFields&limit=200`));
      expect((page.data as any[]).find((x) => x.id === t.id).customFields).toEqual(got.customFields);
    });
  });

  describe(`[${factory.name}] v3 Project: customFields, hiddenListColumns, listColumnsOrder and *CustomFieldsOrder name built-in columns or attached custom fields`, () => {
    const H = harnessPerDescribe(factory);
    let wide: any;
    let p: any;
    let ofP: any;
    let ofOther: any;
    beforeAll(async () => {
      const h = H();
      wide = await field(h, { name: 'Client', type: 'text' });
      p = await h.project({ name: 'CF project P' });
      const other = await h.project({ name: 'CF project other' });
      ofP = await field(h, { name: 'Risk', type: 'dropdown', options: [{ label: 'Low' }], projectId: p.id });
      ofOther = await field(h, { name: 'Elsewhere', type: 'text', projectId: other.id });
    });

    it('customFields on projects: workspace-wide and the project\'s own fields; another project\'s is not_attached; merge and expand as on lists', async () => {
      const created = ok(await H().post('/projects', { name: 'Valued', customFields: [{ customFieldId: wide.id, value: 'ACME' }] }), 201);
      expect(created.customFields).toEqual([{ customFieldId: wide.id, value: 'ACME' }]);
      invalid(await H().post('/projects', { name: 'Not yet', customFields: [{ customFieldId: ofP.id, value: ofP.options[0].id }] }), 'customFields.0.customFieldId', 'not_attached');
      const u = ok(await H().patch(`/projects/${p.id}`, { customFields: [{ customFieldId: ofP.id, value: ofP.options[0].id }, { customFieldId: wide.id, value: 'Globex' }] }));
      expect(u.customFields).toEqual([{ customFieldId: ofP.id, value: ofP.options[0].id }, { customFieldId: wide.id, value: 'Globex' }]);
      invalid(await H().patch(`/projects/${p.id}`, { customFields: [{ customFieldId: ofOther.id, value: 'x' }] }), 'customFields.0.customFieldId', 'not_attached');
      const expanded = ok(await H().get(`/projects/${p.id}?expand=customFields`));
      expect(expanded.customFields.map((e: any) => e.customField.id)).toEqual([ofP.id, wide.id]);
      expect(expanded.customFields[0].customField.options).toEqual(ofP.options);
    });

    it('hiddenListColumns and listColumnsOrder accept the built-in keys and ids of attached custom fields', async () => {
      const u = ok(await H().patch(`/projects/${p.id}`, { hiddenListColumns: ['estimate', ofP.id], listColumnsOrder: [...BUILTIN, wide.id, ofP.id] }));
      expect(u.hiddenListColumns).toEqual(['estimate', ofP.id]);
      expect(u.listColumnsOrder).toEqual([...BUILTIN, wide.id, ofP.id]);
      const created = ok(await H().post('/projects', { name: 'Columns at create', listColumnsOrder: ['status', wide.id], hiddenListColumns: [] }), 201);
      expect(created.listColumnsOrder).toEqual(['status', wide.id]);
    });

    it('anything else in them is 400 validation_failed naming the element (unknown_column): unknown keys, another project\'s field, another workspace\'s, duplicates', async () => {
      const fb = await field(H(), { name: 'Beta column' }, H().b.owner.token);
      const before = ok(await H().get(`/projects/${p.id}`));
      for (const k of ['hiddenListColumns', 'listColumnsOrder']) {
        invalid(await H().patch(`/projects/${p.id}`, { [k]: ['name', 'Name'] }), `${k}.1`, 'unknown_column');
        invalid(await H().patch(`/projects/${p.id}`, { [k]: ['priority'] }), `${k}.0`, 'unknown_column');
        invalid(await H().patch(`/projects/${p.id}`, { [k]: ['name', ofOther.id] }), `${k}.1`, 'unknown_column');
        invalid(await H().patch(`/projects/${p.id}`, { [k]: [fb.id] }), `${k}.0`, 'unknown_column');
        invalid(await H().patch(`/projects/${p.id}`, { [k]: ['name', 'name'] }), `${k}.1`, 'duplicate');
      }
      // At create no project field is attached yet.
      invalid(await H().post('/projects', { name: 'Early', hiddenListColumns: [ofP.id] }), 'hiddenListColumns.0', 'unknown_column');
      const after = ok(await H().get(`/projects/${p.id}`));
      expect(after.updatedAt).toBe(before.updatedAt);
      expect(after.hiddenListColumns).toEqual(before.hiddenListColumns);
    });

    it('customFieldsOrder, taskCustomFieldsOrder and listCustomFieldsOrder hold attached custom field ids only (unknown_custom_field otherwise)', async () => {
      const u = ok(await H().patch(`/projects/${p.id}`, { customFieldsOrder: [ofP.id, wide.id], taskCustomFieldsOrder: [wide.id], listCustomFieldsOrder: [] }));
      expect(u).toMatchObject({ customFieldsOrder: [ofP.id, wide.id], taskCustomFieldsOrder: [wide.id], listCustomFieldsOrder: [] });
      for (const k of ['customFieldsOrder', 'taskCustomFieldsOrder', 'listCustomFieldsOrder']) {
        invalid(await H().patch(`/projects/${p.id}`, { [k]: [wide.id, 'name'] }), `${k}.1`, 'unknown_custom_field');
        invalid(await H().patch(`/projects/${p.id}`, { [k]: [ofOther.id] }), `${k}.0`, 'unknown_custom_field');
        invalid(await H().patch(`/projects/${p.id}`, { [k]: ['nosuchfield000'] }), `${k}.0`, 'unknown_custom_field');
        invalid(await H().patch(`/projects/${p.id}`, { [k]: [wide.id, wide.id] }), `${k}.1`, 'duplicate');
      }
      expect(ok(await H().patch(`/projects/${p.id}`, { taskCustomFieldsOrder: null })).taskCustomFieldsOrder).toBeNull();
    });
  });

  describe(`[${factory.name}] v3 Custom field: deleting one (hard) removes its values and column keys everywhere; removed options clear their values`, () => {
    const H = harnessPerDescribe(factory);

    it('DELETE → 204; its values leave tasks, lists and projects (each with its updated event), its id leaves the column keys; other values stay; no custom-field event', async () => {
      const h = H();
      const p = await h.project({ name: 'CF delete P' });
      const gone = await field(h, { name: 'Going' });
      const stays = await field(h, { name: 'Staying' });
      const both = [{ customFieldId: gone.id, value: 'g' }, { customFieldId: stays.id, value: 's' }];
      const t = await h.task(p.id, { customFields: both });
      const l = await list(h, p.id, { customFields: both });
      ok(await h.patch(`/projects/${p.id}`, { customFields: both, hiddenListColumns: ['name', gone.id], listColumnsOrder: [gone.id, stays.id], taskCustomFieldsOrder: [gone.id] }));
      const untouched = await h.task(p.id, { customFields: [{ customFieldId: stays.id, value: 'only' }] });
      const { result, events } = await during(h, () => h.del(`/custom-fields/${gone.id}`));
      expect(result.status).toBe(204);
      const kept = [{ customFieldId: stays.id, value: 's' }];
      expect(ok(await h.get(`/tasks/${t.id}`)).customFields).toEqual(kept);
      expect(ok(await h.get(`/lists/${l.id}`)).customFields).toEqual(kept);
      const proj = ok(await h.get(`/projects/${p.id}`));
      expect(proj).toMatchObject({ customFields: kept, hiddenListColumns: ['name'], listColumnsOrder: [stays.id], taskCustomFieldsOrder: [] });
      expect(ofType(events, 'task.updated', t.id)[0].payload.task.customFields).toEqual(kept);
      expect(ofType(events, 'list.updated', l.id)).toHaveLength(1);
      expect(ofType(events, 'project.updated', p.id)).toHaveLength(1);
      expect(ofType(events, 'task.updated', untouched.id)).toEqual([]);
      expect(events.filter((e) => String(e.type).startsWith('customField'))).toEqual([]);
      problem(await h.get(`/custom-fields/${gone.id}`), 404, 'resource_not_found');
      expect(ok(await h.get(`/tasks/${t.id}?expand=customFields`)).customFields.map((e: any) => e.customField.id)).toEqual([stays.id]);
    });

    it('a deletion racing writes of its values leaves no value of the gone field behind (each write answers 200, or 404 once the field is gone)', async () => {
      const h = H();
      const p = await h.project({ name: 'CF race P' });
      const racing = await field(h, { name: 'Racing' });
      const tasks = await Promise.all(Array.from({ length: 8 }, (_, i) => h.task(p.id, { name: `race ${i}` })));
      const replies = await Promise.all([
        ...tasks.map((t, i) => h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: racing.id, value: `v${i}` }] })),
        h.del(`/custom-fields/${racing.id}`),
      ]);
      expect(replies.at(-1)!.status).toBe(204);
      for (const r of replies.slice(0, -1)) expect([200, 404], JSON.stringify(r.body)).toContain(r.status);
      for (const t of tasks) expect(ok(await h.get(`/tasks/${t.id}`)).customFields).toEqual([]);
    });

    it('a trashed project holding a value loses it too (no event while trashed); restored, it shows no value of the gone field', async () => {
      const h = H();
      const gone = await field(h, { name: 'Gone while trashed' });
      const p = ok(await h.post('/projects', { name: 'Trashed holder', customFields: [{ customFieldId: gone.id, value: 'x' }], listColumnsOrder: [gone.id] }), 201);
      ok(await h.del(`/projects/${p.id}`), 204);
      const { events } = await during(h, () => h.del(`/custom-fields/${gone.id}`));
      expect(ofType(events, 'project.updated', p.id)).toEqual([]);
      const back = ok(await h.post(`/projects/${p.id}/restore`));
      expect(back.customFields).toEqual([]);
      expect(back.listColumnsOrder).toEqual([]);
    });

    it('dropdown options left out of an update clear the values naming them; values of kept options stay', async () => {
      const h = H();
      const p = await h.project({ name: 'CF options P' });
      const d = await field(h, { name: 'Colour', type: 'dropdown', options: [{ label: 'Red' }, { label: 'Blue' }] });
      const [red, blue] = d.options;
      const t1 = await h.task(p.id, { customFields: [{ customFieldId: d.id, value: red.id }] });
      const t2 = await h.task(p.id, { customFields: [{ customFieldId: d.id, value: blue.id }] });
      ok(await h.patch(`/custom-fields/${d.id}`, { options: [{ id: blue.id, label: 'Navy' }, { label: 'Green' }] }));
      expect(ok(await h.get(`/tasks/${t1.id}`)).customFields).toEqual([]);
      expect(ok(await h.get(`/tasks/${t2.id}`)).customFields).toEqual([{ customFieldId: d.id, value: blue.id }]);
      invalid(await h.patch(`/tasks/${t2.id}`, { customFields: [{ customFieldId: d.id, value: red.id }] }), 'customFields.0.value', 'invalid_value');
    });

    it('a project\'s own fields go for good when the project is purged (30 days after deletion)', async () => {
      const h = H();
      const p = await h.project({ name: 'CF purged P' });
      const own = await field(h, { name: 'Own of purged', projectId: p.id });
      const wideField = await field(h, { name: 'Wide survives purge' });
      ok(await h.del(`/projects/${p.id}`), 204);
      expect(ok(await h.get(`/custom-fields/${own.id}`)).projectId).toBe(p.id);
      h.clock.advance(31 * DAY);
      await h.api.jobs.purge();
      problem(await h.get(`/custom-fields/${own.id}`), 404, 'resource_not_found');
      expect(ok(await h.get(`/custom-fields/${wideField.id}`)).name).toBe('Wide survives purge');
    });

    it('custom fields are not in the event catalog: no customField.* name, and every event a custom-field run emits is a catalog name', async () => {
      const h = H();
      const c = eventCatalog(h.api.registry);
      expect(c.all.filter((n) => n.startsWith('customField'))).toEqual([]);
      const p = await h.project({ name: 'CF events' });
      const { events } = await during(h, async () => {
        const x = await field(h, { name: 'Evented?', type: 'dropdown', options: [{ label: 'A' }] });
        const t = await h.task(p.id, { customFields: [{ customFieldId: x.id, value: x.options[0].id }] });
        await h.patch(`/custom-fields/${x.id}`, { name: 'Renamed', options: [] });
        await h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: x.id, value: '' }] });
        await h.del(`/custom-fields/${x.id}`);
      });
      const types = events.map((e) => e.type as string);
      expect(types).toContain('task.created');
      expect(types).toContain('task.updated');
      expect(types.filter((t) => t.startsWith('customField'))).toEqual([]);
      for (const t of types) expect(c.has(t), t).toBe(true);
    });
  });

  describe(`[${factory.name}] v3 Custom field: deleting a field or removing its options keeps every concurrent write of other values (no lost update, no 5xx)`, () => {
    const H = harnessPerDescribe(factory);
    const ROUNDS = 4;

    it('tasks holding values of F and G: PATCH G on each while F is deleted → every PATCH 200, every new G value kept, no F value left', async () => {
      const h = H();
      const p = await h.project({ name: 'CF lost update P' });
      const g = await field(h, { name: 'Kept G' });
      for (let round = 0; round < ROUNDS; round++) {
        const f = await field(h, { name: `Deleted F ${round}` });
        const tasks = await Promise.all(Array.from({ length: 6 }, (_, i) => h.task(p.id, { name: `lu ${round}.${i}`, customFields: [{ customFieldId: f.id, value: 'f' }, { customFieldId: g.id, value: 'old' }] })));
        const replies = await Promise.all([
          h.del(`/custom-fields/${f.id}`),
          ...tasks.map((t, i) => h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: g.id, value: `new ${round}.${i}` }] })),
        ]);
        expect(replies[0]!.status, JSON.stringify(replies[0]!.body)).toBe(204);
        for (const r of replies.slice(1)) expect(r.status, JSON.stringify(r.body)).toBe(200);
        for (const [i, t] of tasks.entries()) {
          expect(ok(await h.get(`/tasks/${t.id}`)).customFields).toEqual([{ customFieldId: g.id, value: `new ${round}.${i}` }]);
        }
      }
    });

    it('removing a dropdown option while other values of the same rows are written: every write 200 and kept, the removed option\'s values cleared', async () => {
      const h = H();
      const p = await h.project({ name: 'CF option race P' });
      const g = await field(h, { name: 'Option race G' });
      for (let round = 0; round < ROUNDS; round++) {
        const d = await field(h, { name: `Option race D ${round}`, type: 'dropdown', options: [{ label: 'Drop' }, { label: 'Keep' }] });
        const [drop, keep] = d.options;
        const tasks = await Promise.all(Array.from({ length: 6 }, (_, i) => h.task(p.id, { name: `or ${round}.${i}`, customFields: [{ customFieldId: d.id, value: i % 2 ? keep.id : drop.id }, { customFieldId: g.id, value: 'old' }] })));
        const replies = await Promise.all([
          h.patch(`/custom-fields/${d.id}`, { options: [{ id: keep.id, label: 'Keep' }] }),
          ...tasks.map((t, i) => h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: g.id, value: `new ${i}` }] })),
        ]);
        for (const r of replies) expect(r.status, JSON.stringify(r.body)).toBe(200);
        for (const [i, t] of tasks.entries()) {
          const want = [...(i % 2 ? [{ customFieldId: d.id, value: keep.id }] : []), { customFieldId: g.id, value: `new ${i}` }];
          expect(ok(await h.get(`/tasks/${t.id}`)).customFields).toEqual(want);
        }
      }
    });

    it('writes of the field\'s own values and of project column keys naming it, racing its deletion: each 200 or 4xx (never 5xx), nothing of it left', async () => {
      const h = H();
      for (let round = 0; round < ROUNDS; round++) {
        const f = await field(h, { name: `Keys race ${round}` });
        const projects = await Promise.all(Array.from({ length: 3 }, (_, i) => h.post('/projects', { name: `Keys race ${round}.${i}`, listColumnsOrder: ['name', f.id] }).then((r) => ok(r, 201))));
        const p = projects[0];
        const tasks = await Promise.all(Array.from({ length: 4 }, (_, i) => h.task(p.id, { name: `kr ${i}`, customFields: [{ customFieldId: f.id, value: 'held' }] })));
        const replies = await Promise.all([
          ...projects.map((x) => h.patch(`/projects/${x.id}`, { hiddenListColumns: [f.id], customFields: [{ customFieldId: f.id, value: 'p' }] })),
          h.del(`/custom-fields/${f.id}`),
          ...tasks.map((t) => h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: f.id, value: 'again' }] })),
          ...projects.map((x, i) => h.post('/tasks', { name: `kr new ${i}`, projectId: x.id, customFields: [{ customFieldId: f.id, value: 'new' }] })),
          ...projects.map((x, i) => h.post('/lists', { name: `kr list ${i}`, projectId: x.id, customFields: [{ customFieldId: f.id, value: 'new' }] })),
        ]);
        for (const r of replies) expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
        expect(replies[projects.length]!.status).toBe(204);
        for (const r of replies.slice(projects.length + 1 + tasks.length)) {
          if (r.status !== 201) continue;
          expect(ok(await h.get(`/${r.body.niceId === undefined ? 'lists' : 'tasks'}/${r.body.id}`)).customFields).toEqual([]);
        }
        for (const x of projects) {
          const now = ok(await h.get(`/projects/${x.id}`));
          expect(now.customFields).toEqual([]);
          expect(now.hiddenListColumns ?? []).not.toContain(f.id);
          expect(now.listColumnsOrder).toEqual(['name']);
        }
        for (const t of tasks) expect(ok(await h.get(`/tasks/${t.id}`)).customFields).toEqual([]);
      }
    });
  });

  describe(`[${factory.name}] v3 Custom field: which rows hold a field is indexed exactly (values cleared, moved, deleted, purged)`, () => {
    const H = harnessPerDescribe(factory);
    const holdersOf = async (fieldId: string) => ((await H().store.db.selectFrom('links').select(['kind', 'parent_id']).where('related_id', '=', fieldId).execute()) as any[])
      .map((r) => `${r.kind} ${r.parent_id}`).sort();

    it('the index names exactly the live rows whose values or column keys name the field', async () => {
      const h = H();
      const p = await h.project({ name: 'CF index P' });
      const q = await h.project({ name: 'CF index Q' });
      const w = await field(h, { name: 'Indexed wide' });
      const own = await field(h, { name: 'Indexed own', projectId: p.id });
      const v = (id: string) => [{ customFieldId: id, value: 'x' }];
      const cleared = await h.task(p.id, { customFields: v(w.id) });
      const kept = await h.task(p.id, { customFields: v(w.id) });
      const deleted = await h.task(p.id, { customFields: v(w.id) });
      const sub = await h.task(p.id, { parentTaskId: deleted.id, customFields: v(w.id) });
      const mover = await h.task(p.id, { customFields: v(own.id) });
      const moverSub = await h.task(p.id, { parentTaskId: mover.id, customFields: [...v(own.id), { customFieldId: w.id, value: 'y' }] });
      const l = await list(h, p.id, { customFields: v(w.id) });
      const trashedProject = ok(await h.post('/projects', { name: 'CF index purged', customFields: v(w.id) }), 201);
      const tp = await h.task(trashedProject.id, { customFields: v(w.id) });
      ok(await h.patch(`/projects/${p.id}`, { listColumnsOrder: [own.id] }));
      ok(await h.patch(`/tasks/${cleared.id}`, { customFields: [{ customFieldId: w.id, value: '' }] }));
      ok(await h.del(`/tasks/${deleted.id}`), 204);
      ok(await h.patch(`/tasks/${mover.id}`, { projectId: q.id }));
      ok(await h.del(`/lists/${l.id}`), 204);
      ok(await h.del(`/projects/${trashedProject.id}`), 204);
      h.clock.advance(31 * DAY);
      await h.api.jobs.purge();
      expect(await holdersOf(w.id)).toEqual([`customValues:task ${kept.id}`, `customValues:task ${moverSub.id}`].sort());
      expect(await holdersOf(own.id)).toEqual([`customValues:project ${p.id}`]);
      ok(await h.patch(`/projects/${p.id}`, { listColumnsOrder: [] }));
      expect(await holdersOf(own.id)).toEqual([]);
      void tp; void sub;
      ok(await h.del(`/custom-fields/${w.id}`), 204);
      expect(await holdersOf(w.id)).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Custom field: removing dropdown options clears values like a delete, so it needs custom-fields:delete`, () => {
    const H = harnessPerDescribe(factory);

    it('a regular member relabels and adds options (200) but removing one is 403 permission_denied naming custom-fields:delete, nothing changed; the owner may', async () => {
      const h = H();
      const p = await h.project({ name: 'CF options perm P', members: [h.a.regular.id] });
      const d = await field(h, { name: 'Perm dropdown', type: 'dropdown', options: [{ label: 'A' }, { label: 'B' }] });
      const [a, b] = d.options;
      const t = await h.task(p.id, { customFields: [{ customFieldId: d.id, value: a.id }] });
      const token = h.a.regular.token;
      const grown = ok(await h.patch(`/custom-fields/${d.id}`, { options: [{ id: a.id, label: 'A2' }, { id: b.id, label: 'B' }, { label: 'C' }] }, { token }));
      expect(grown.options.map((o: any) => o.label)).toEqual(['A2', 'B', 'C']);
      const denied = problem(await h.patch(`/custom-fields/${d.id}`, { options: [] }, { token }), 403, 'permission_denied');
      expect(denied.missingPermissions).toEqual(['custom-fields:delete']);
      problem(await h.patch(`/custom-fields/${d.id}`, { options: [{ id: b.id, label: 'B' }] }, { token }), 403, 'permission_denied');
      expect(ok(await h.get(`/custom-fields/${d.id}`)).options).toEqual(grown.options);
      expect(ok(await h.get(`/tasks/${t.id}`)).customFields).toEqual([{ customFieldId: d.id, value: a.id }]);
      ok(await h.patch(`/custom-fields/${d.id}`, { options: [{ id: b.id, label: 'B' }] }));
      expect(ok(await h.get(`/tasks/${t.id}`)).customFields).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Custom field: fields of projects the caller cannot open stay hidden (Project access)`, () => {
    const H = harnessPerDescribe(factory);

    it('an entry naming a field of a project the caller cannot open answers 404 resource_not_found like an unknown id (not not_attached)', async () => {
      const h = H();
      const mine = await h.project({ name: 'CF hidden mine', members: [h.a.regular.id] });
      const closed = await h.project({ name: 'CF hidden closed', accessType: 'limited' });
      const secret = await field(h, { name: 'Secret field', projectId: closed.id });
      const visibleOther = await field(h, { name: 'Other visible', projectId: (await h.project({ name: 'CF hidden open', members: [h.a.regular.id] })).id });
      const t = await h.task(mine.id);
      const token = h.a.regular.token;
      const hidden = problem(await h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: secret.id, value: 'x' }] }, { token }), 404, 'resource_not_found');
      expect(hidden.field).toBe('customFields.0.customFieldId');
      const unknown = problem(await h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: 'nosuchfield000', value: 'x' }] }, { token }), 404, 'resource_not_found');
      expect(unknown.field).toBe('customFields.0.customFieldId');
      invalid(await h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: visibleOther.id, value: 'x' }] }, { token }), 'customFields.0.customFieldId', 'not_attached');
      // The owner opens every project: not_attached.
      invalid(await h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: secret.id, value: 'x' }] }), 'customFields.0.customFieldId', 'not_attached');
    });

    it('a name clash with a field of a project the caller cannot open is 409 conflict without its id or project', async () => {
      const h = H();
      const closed = await h.project({ name: 'CF clash closed', accessType: 'limited' });
      const secret = await field(h, { name: 'Clashing secret', projectId: closed.id });
      const r = problem(await h.post('/custom-fields', { name: 'Clashing secret', type: 'text' }, { token: h.a.regular.token }), 409, 'conflict');
      expect(r.field).toBe('name');
      expect(r.id).toBeUndefined();
      expect(JSON.stringify(r)).not.toContain(secret.id);
      expect(JSON.stringify(r)).not.toContain(closed.id);
      expect(problem(await h.post('/custom-fields', { name: 'Clashing secret', type: 'text' }), 409, 'conflict').id).toBe(secret.id);
    });
  });

  describe(`[${factory.name}] v3 Custom field: bounded rows and responses (Limits: 1 MiB webhook payload; expand budget)`, () => {
    const H = harnessPerDescribe(factory);

    it('a row\'s customFields take at most 256 KiB as JSON: 400 validation_failed too_big on customFields, nothing written', async () => {
      const h = H();
      const p = await h.project({ name: 'CF bytes P' });
      const fs: any[] = [];
      for (let i = 0; i < 22; i++) fs.push(await field(h, { name: `bytes ${i}` }));
      // Control characters escape to 6 bytes each in JSON: 2,000 of them are 12,000 bytes.
      const heavy = '\u0001'.repeat(2000);
      const t = await h.task(p.id, { customFields: fs.slice(0, 21).map((f) => ({ customFieldId: f.id, value: heavy })) });
      expect(t.customFields).toHaveLength(21);
      const { result, events } = await during(h, () => h.patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: fs[21].id, value: heavy }] }));
      invalid(result, 'customFields', 'too_big');
      expect(events).toEqual([]);
      expect(ok(await h.get(`/tasks/${t.id}`)).customFields).toHaveLength(21);
      invalid(await h.post('/tasks', { name: 'Too heavy', projectId: p.id, customFields: fs.map((f) => ({ customFieldId: f.id, value: heavy })) }), 'customFields', 'too_big');
    });

    it('expand=customFields counts each entry one expand row per started KiB of its field record: 400 expand_budget_exceeded past the budget', async () => {
      const h = H();
      const p = await h.project({ name: 'CF expand P' });
      const big = await field(h, { name: 'Big record', type: 'dropdown', description: 'd'.repeat(5000), options: Array.from({ length: 100 }, (_, i) => ({ label: `${i} ${'o'.repeat(95)}` })) });
      const value = [{ customFieldId: big.id, value: big.options[0].id }];
      // About 20 KiB of JSON: 20 expand rows an entry, so 120 entries (2,400) pass the 2,000 budget.
      for (let i = 0; i < 120; i++) await h.task(p.id, { name: `big ${i}`, customFields: value });
      const few = ok(await h.get(`/tasks?projectId=${p.id}&limit=10&expand=customFields`));
      expect(few.data[0].customFields[0].customField.description).toHaveLength(5000);
      const all = await h.get(`/tasks?projectId=${p.id}&limit=120&expand=customFields`);
      expect(all.status).toBe(400);
      const r = problem(all, 400, 'expand_budget_exceeded');
      expect(r.relation).toBe('customFields');
    });
  });

  describe(`[${factory.name}] Limits: customFields entries per request 50`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    const fields: any[] = [];
    beforeAll(async () => {
      p = await H().project({ name: 'CF limits' });
      for (let i = 0; i < 51; i++) fields.push(await field(H(), { name: `limit ${i}` }));
    });
    const entries = (n: number, value = 'v') => fields.slice(0, n).map((f) => ({ customFieldId: f.id, value }));

    for (const [path, body] of [['/tasks', () => ({ name: 'T', projectId: p.id })], ['/lists', () => ({ name: 'L', projectId: p.id })], ['/projects', () => ({ name: `Pr ${Math.random()}` })]] as const) {
      it(`POST ${path}: 50 entries are accepted, 51 are 400 validation_failed on customFields and nothing is written`, async () => {
        const okBody = ok(await H().post(path, { ...body(), customFields: entries(50) }), 201);
        expect(okBody.customFields).toHaveLength(50);
        const before = (await H().outbox()).length;
        invalid(await H().post(path, { ...body(), customFields: entries(51) }), 'customFields', 'too_big');
        expect((await H().outbox()).length).toBe(before);
      });
    }

    it('PATCH: 51 entries are refused even when merging; a row may hold more than 50 values across requests', async () => {
      const t = await H().task(p.id, { customFields: entries(50) });
      invalid(await H().patch(`/tasks/${t.id}`, { customFields: entries(51, 'w') }), 'customFields', 'too_big');
      const more = ok(await H().patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: fields[50].id, value: 'last' }] }));
      expect(more.customFields).toHaveLength(51);
    });

    it('a value holds at most 2,000 characters', async () => {
      const t = await H().task(p.id, { customFields: [{ customFieldId: fields[0].id, value: 'x'.repeat(2000) }] });
      expect(t.customFields[0].value).toHaveLength(2000);
      invalid(await H().patch(`/tasks/${t.id}`, { customFields: [{ customFieldId: fields[0].id, value: 'x'.repeat(2001) }] }), 'customFields.0.value');
    });
  });
}
