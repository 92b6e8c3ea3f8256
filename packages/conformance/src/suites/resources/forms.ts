import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, StoreFactory } from '../../kit';
import { DAY, sorted, expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';
import { during, harnessPerDescribe, ofType } from '../shared';

/**
 * Forms (spec "Form", Limits "form: 1-200 questions, max 100 choices each",
 * Events "Lifecycle resources": form), with the decisions taken where the
 * spec says "not shown" (docs/not-shown.md "Forms"): the question and choice
 * structure, meta keys, the afterSubmit object, sharing and url, the role
 * policy.
 */

const ids = (rows: any[]): string[] => rows.map((r) => r.id);

async function listIds(h: Harness, path: string, token?: string): Promise<string[]> {
  return ids(ok(await h.get(path, { token })).data);
}

/** A new short-text question. */
const text = (title = 'Your name', extra: Record<string, unknown> = {}) => ({ type: 'shortText', title, ...extra });
/** A new single-choice question with choices labelled by `labels`. */
const pick = (title: string, labels: string[], extra: Record<string, unknown> = {}) => ({ type: 'singleChoice', title, choices: labels.map((label) => ({ label })), ...extra });

async function form(h: Harness, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/forms', { meta: { title: 'Survey' }, fields: [text()], ...body }, { token }), 201);
}

/** A project's default status and a new list in it. */
async function targets(h: Harness, projectId: string): Promise<{ statusId: string; listId: string }> {
  const statusId = ok(await h.get(`/projects/${projectId}`)).defaultStatusId as string;
  const listId = ok(await h.post('/lists', { name: 'Intake', projectId }), 201).id as string;
  return { statusId, listId };
}

const stored = async (h: Harness, id: string) => ok(await h.get(`/forms/${id}`));

export function formsSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Form: fields (name = meta.title, meta, multiSubmit, docAccessType, createdById)`, () => {
    const H = harnessPerDescribe(factory);

    it('POST /forms → 201 with the defaults and the server-set fields; GET answers the same', async () => {
      const h = H();
      const f = ok(await h.post('/forms', { meta: { title: '  Bug report  ' }, fields: [text('Summary')] }, { token: h.a.regular.token }), 201);
      expect(f).toMatchObject({
        name: 'Bug report', meta: { title: 'Bug report', description: null }, automation: null, targetStatusId: null, targetListId: null,
        afterSubmit: null, multiSubmit: false, docAccessType: 'public', isShared: false, url: null, projectId: null,
        createdById: h.a.regular.id, purgeAt: null, deletedById: null,
      });
      expect(f.id).toBeTypeOf('string');
      expect(f.createdAt).toBeTypeOf('string');
      expect(f.createdByActorId).toBeTypeOf('string');
      expect(f.fields).toHaveLength(1);
      expect(f).not.toHaveProperty('shareKey');
      expect(await stored(h, f.id)).toEqual(f);
    });

    it('name is a read-only view of meta.title: a name sent is ignored (rule 1); a PATCH of name alone is 400 empty_update; changing meta.title changes name', async () => {
      const h = H();
      const f = await form(h, { name: 'Ignored', meta: { title: 'Real title' } });
      expect(f.name).toBe('Real title');
      problem(await h.patch(`/forms/${f.id}`, { name: 'Other' }), 400, 'empty_update');
      const u = ok(await h.patch(`/forms/${f.id}`, { meta: { title: '  New title ' } }));
      expect(u.name).toBe('New title');
      expect(u.meta.title).toBe('New title');
      expect((await stored(h, f.id)).name).toBe('New title');
    });

    it('meta is required with a title of 1-255 characters after trimming (256 refused on create and update; blank and missing refused)', async () => {
      const h = H();
      const f = await form(h, { meta: { title: `  ${'t'.repeat(255)}  ` } });
      expect(f.name).toBe('t'.repeat(255));
      invalid(await h.post('/forms', { meta: { title: 't'.repeat(256) }, fields: [text()] }), 'meta.title');
      invalid(await h.patch(`/forms/${f.id}`, { meta: { title: 'u'.repeat(256) } }), 'meta.title');
      invalid(await h.post('/forms', { fields: [text()] }), 'meta', 'required');
      invalid(await h.post('/forms', { meta: {}, fields: [text()] }), 'meta.title', 'required');
      invalid(await h.post('/forms', { meta: { description: 'no title' }, fields: [text()] }), 'meta.title', 'required');
      invalid(await h.post('/forms', { meta: { title: '   ' }, fields: [text()] }), 'meta.title');
      invalid(await h.post('/forms', { meta: { title: 7 }, fields: [text()] }), 'meta.title');
      invalid(await h.post('/forms', { meta: 'Survey', fields: [text()] }), 'meta');
      invalid(await h.patch(`/forms/${f.id}`, { meta: null }), 'meta');
      invalid(await h.patch(`/forms/${f.id}`, { meta: { title: '' } }), 'meta.title');
      expect((await stored(h, f.id)).name).toBe('t'.repeat(255));
    });

    it('meta.description: string of at most 10,000 characters or null; meta keys beyond title and description are refused', async () => {
      const h = H();
      const f = await form(h, { meta: { title: 'Described', description: 'd'.repeat(10_000) } });
      expect(f.meta.description).toHaveLength(10_000);
      invalid(await h.post('/forms', { meta: { title: 'Too long', description: 'd'.repeat(10_001) }, fields: [text()] }), 'meta.description');
      invalid(await h.post('/forms', { meta: { title: 'Extra', theme: 'dark' }, fields: [text()] }), 'meta', 'unrecognized_keys');
      invalid(await h.patch(`/forms/${f.id}`, { meta: { color: '#fff' } }), 'meta');
      expect((await stored(h, f.id)).meta).toEqual({ title: 'Described', description: 'd'.repeat(10_000) });
    });

    it('PATCH meta merges: the keys sent replace, the others stay; description null clears it', async () => {
      const h = H();
      const f = await form(h, { meta: { title: 'Merge', description: 'first' } });
      expect(ok(await h.patch(`/forms/${f.id}`, { meta: { description: 'second' } })).meta).toEqual({ title: 'Merge', description: 'second' });
      expect(ok(await h.patch(`/forms/${f.id}`, { meta: { title: 'Merged' } })).meta).toEqual({ title: 'Merged', description: 'second' });
      expect(ok(await h.patch(`/forms/${f.id}`, { meta: { description: null } })).meta).toEqual({ title: 'Merged', description: null });
    });

    it('multiSubmit is a boolean (default false); docAccessType is public (default), limited or private', async () => {
      const h = H();
      const f = await form(h, { multiSubmit: true, docAccessType: 'limited' });
      expect(f).toMatchObject({ multiSubmit: true, docAccessType: 'limited' });
      expect(ok(await h.patch(`/forms/${f.id}`, { docAccessType: 'private', multiSubmit: false }))).toMatchObject({ docAccessType: 'private', multiSubmit: false });
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], docAccessType: 'project' }), 'docAccessType');
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], multiSubmit: 'yes' }), 'multiSubmit');
      invalid(await h.patch(`/forms/${f.id}`, { docAccessType: null }), 'docAccessType');
      invalid(await h.patch(`/forms/${f.id}`, { multiSubmit: null }), 'multiSubmit');
      expect(await stored(h, f.id)).toMatchObject({ docAccessType: 'private', multiSubmit: false });
    });

    it('createdById, url, purgeAt and deletedById are server-set: values sent are ignored on create; an unknown key is refused', async () => {
      const h = H();
      const f = await form(h, { createdById: h.a.regular.id, url: 'https://evil.example/f', purgeAt: '2030-01-01T00:00:00.000Z', deletedById: h.a.regular.id });
      expect(f).toMatchObject({ createdById: h.a.owner.id, url: null, purgeAt: null, deletedById: null });
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], responses: [] }), 'responses', 'unrecognized_key');
    });
  });

  describe(`[${factory.name}] v3 Form: fields (the questions in order; Limits "form 1-200 questions, max 100 choices each")`, () => {
    const H = harnessPerDescribe(factory);

    it('questions sent on create get ids and keep their order; defaults: description null, required false, choices [] for non-choice types', async () => {
      const h = H();
      const f = await form(h, {
        fields: [
          text('Name', { required: true, description: 'Full name' }),
          pick('Team', ['Red', 'Blue']),
          { type: 'rating', title: 'How was it?' },
        ],
      });
      expect(f.fields.map((q: any) => q.title)).toEqual(['Name', 'Team', 'How was it?']);
      expect(f.fields[0]).toEqual({ id: f.fields[0].id, type: 'shortText', title: 'Name', description: 'Full name', required: true, choices: [] });
      expect(f.fields[1]).toMatchObject({ type: 'singleChoice', title: 'Team', description: null, required: false });
      expect(f.fields[1].choices.map((c: any) => c.label)).toEqual(['Red', 'Blue']);
      for (const c of f.fields[1].choices) expect(c.id).toMatch(/^[0-9A-Za-z_!]+$/);
      expect(f.fields[2]).toMatchObject({ type: 'rating', choices: [] });
      const qids = f.fields.map((q: any) => q.id);
      expect(new Set(qids).size).toBe(3);
      for (const id of qids) expect(id).toMatch(/^[0-9A-Za-z_!]+$/);
    });

    it('every question type of the closed set is accepted; another type is refused', async () => {
      const h = H();
      const all = ['shortText', 'longText', 'singleChoice', 'multipleChoice', 'date', 'number', 'email', 'file', 'rating'];
      const f = await form(h, { fields: all.map((type) => ({ type, title: type, ...(type.endsWith('Choice') ? { choices: [{ label: 'A' }] } : {}) })) });
      expect(f.fields.map((q: any) => q.type)).toEqual(all);
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [{ type: 'signature', title: 'Sign' }] }), 'fields.0.type');
    });

    it('Limits: 200 questions are accepted, 201 refused (create and update)', async () => {
      const h = H();
      const many = (n: number) => Array.from({ length: n }, (_, i) => text(`Q${i}`));
      const f = await form(h, { fields: many(200) });
      expect(f.fields).toHaveLength(200);
      invalid(await h.post('/forms', { meta: { title: 'Too many' }, fields: many(201) }), 'fields', 'too_big');
      invalid(await h.patch(`/forms/${f.id}`, { fields: [...f.fields.map((q: any) => ({ id: q.id })), text('one more')] }), 'fields', 'too_big');
      expect((await stored(h, f.id)).fields).toHaveLength(200);
      // Far past the limit, the array is refused without being read.
      invalid(await h.post('/forms', { meta: { title: 'Way too many' }, fields: many(1500) }), 'fields', 'too_big');
    });

    it('Limits: fields is never empty ([] refused on create and update) and is required on create', async () => {
      const h = H();
      invalid(await h.post('/forms', { meta: { title: 'Empty' }, fields: [] }), 'fields', 'too_small');
      invalid(await h.post('/forms', { meta: { title: 'None' } }), 'fields', 'required');
      const f = await form(h);
      invalid(await h.patch(`/forms/${f.id}`, { fields: [] }), 'fields', 'too_small');
      invalid(await h.patch(`/forms/${f.id}`, { fields: null }), 'fields');
      expect((await stored(h, f.id)).fields).toEqual(f.fields);
    });

    it('Limits: 100 choices in a question are accepted, 101 refused (create and update)', async () => {
      const h = H();
      const labels = (n: number) => Array.from({ length: n }, (_, i) => `Option ${i}`);
      const f = await form(h, { fields: [pick('Hundred', labels(100)), { type: 'multipleChoice', title: 'Also hundred', choices: labels(100).map((label) => ({ label })) }] });
      expect(f.fields[0].choices).toHaveLength(100);
      expect(f.fields[1].choices).toHaveLength(100);
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [pick('Too many', labels(101))] }), 'fields.0.choices', 'too_big');
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: f.fields[0].id }, { id: f.fields[1].id, choices: [...f.fields[1].choices, { label: 'extra' }] }] }), 'fields.1.choices', 'too_big');
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [pick('Way too many', labels(1200))] }), 'fields.0.choices', 'too_big');
      expect((await stored(h, f.id)).fields[1].choices).toHaveLength(100);
    });

    it('full replacement: a question with its id is kept (same id; properties sent replace), a question without id is new, questions left out are deleted', async () => {
      const h = H();
      const f = await form(h, { fields: [text('A'), text('B', { required: true, description: 'bee' }), text('C')] });
      const [a, b, c] = f.fields;
      const u = ok(await h.patch(`/forms/${f.id}`, { fields: [{ id: c.id, title: 'C renamed' }, text('D'), { id: a.id }] }));
      expect(u.fields.map((q: any) => q.title)).toEqual(['C renamed', 'D', 'A']);
      expect(u.fields[0].id).toBe(c.id);
      expect(u.fields[2]).toEqual(a);
      expect(u.fields[1].id).not.toBe(b.id);
      expect(u.fields.map((q: any) => q.id)).not.toContain(b.id);
      // The deleted question cannot be brought back by its id.
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: b.id }] }), 'fields.0.id', 'unknown_question');
      // A kept question keeps what it does not send, and changes what it sends (description null clears it).
      const kept = ok(await h.patch(`/forms/${f.id}`, { fields: [{ id: a.id, required: true, description: 'now described' }] }));
      expect(kept.fields).toEqual([{ ...a, required: true, description: 'now described' }]);
      expect(ok(await h.patch(`/forms/${f.id}`, { fields: [{ id: a.id, description: null }] })).fields[0].description).toBeNull();
    });

    it('omitting fields leaves the questions untouched; GET → PATCH of the same fields changes none of them', async () => {
      const h = H();
      const f = await form(h, { fields: [text('One'), pick('Two', ['x', 'y'])] });
      const u = ok(await h.patch(`/forms/${f.id}`, { multiSubmit: true }));
      expect(u.fields).toEqual(f.fields);
      const again = ok(await h.patch(`/forms/${f.id}`, { fields: (await stored(h, f.id)).fields }));
      expect(again.fields).toEqual(f.fields);
    });

    it('choices are kept by id too: a choice with its id keeps its id (label may change), one without is new, the ones left out are deleted', async () => {
      const h = H();
      const f = await form(h, { fields: [pick('Colour', ['Red', 'Green', 'Blue'])] });
      const q = f.fields[0];
      const [red, green, blue] = q.choices;
      const u = ok(await h.patch(`/forms/${f.id}`, { fields: [{ id: q.id, choices: [{ id: blue.id, label: 'Navy' }, { label: 'Pink' }, { id: red.id, label: 'Red' }] }] }));
      const cs = u.fields[0].choices;
      expect(cs.map((c: any) => c.label)).toEqual(['Navy', 'Pink', 'Red']);
      expect(cs[0].id).toBe(blue.id);
      expect(cs[2].id).toBe(red.id);
      expect(cs.map((c: any) => c.id)).not.toContain(green.id);
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: q.id, choices: [{ id: green.id, label: 'Green' }] }] }), 'fields.0.choices.0.id', 'unknown_choice');
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: q.id, choices: [{ id: red.id, label: 'a' }, { id: red.id, label: 'b' }] }] }), 'fields.0.choices.1.id', 'duplicate_choice');
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: q.id, choices: [] }] }), 'fields.0.choices', 'too_small');
      expect((await stored(h, f.id)).fields[0].choices).toEqual(cs);
    });

    it('a kept choice may be sent as {id} alone (its label stays, as {id} keeps a question); a new choice needs a label (required)', async () => {
      const h = H();
      const f = await form(h, { fields: [pick('Size', ['Small', 'Large'])] });
      const q = f.fields[0];
      const [small, large] = q.choices;
      const u = ok(await h.patch(`/forms/${f.id}`, { fields: [{ id: q.id, choices: [{ id: large.id }, { id: small.id, label: 'Tiny' }, { label: 'Medium' }] }] }));
      expect(u.fields[0].choices.map((c: any) => [c.id, c.label])).toEqual([[large.id, 'Large'], [small.id, 'Tiny'], [u.fields[0].choices[2].id, 'Medium']]);
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: q.id, choices: [{ id: large.id }, {}] }] }), 'fields.0.choices.1.label', 'required');
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [{ type: 'singleChoice', title: 'No label', choices: [{}] }] }), 'fields.0.choices.0.label', 'required');
      expect((await stored(h, f.id)).fields[0].choices).toEqual(u.fields[0].choices);
    });

    it('an id that is not a question of this form (another form\'s, unknown, or on create) is 400 unknown_question; an id twice is duplicate_question; nothing changes', async () => {
      const h = H();
      const f = await form(h, { fields: [text('Mine')] });
      const other = await form(h, { fields: [text('Theirs')] });
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: other.fields[0].id }] }), 'fields.0.id', 'unknown_question');
      invalid(await h.patch(`/forms/${f.id}`, { fields: [text('new'), { id: 'nosuchquestion1' }] }), 'fields.1.id', 'unknown_question');
      invalid(await h.post('/forms', { meta: { title: 'Copy' }, fields: [{ ...f.fields[0] }] }), 'fields.0.id', 'unknown_question');
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: f.fields[0].id }, { id: f.fields[0].id }] }), 'fields.1.id', 'duplicate_question');
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: 'not an id!' }] }), 'fields.0.id');
      expect(await stored(h, f.id)).toEqual(f);
      expect((await stored(h, other.id)).fields).toEqual(other.fields);
    });

    it('a kept question keeps its type (another type is 400 immutable); a new question needs type and title', async () => {
      const h = H();
      const f = await form(h, { fields: [text('Typed')] });
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ id: f.fields[0].id, type: 'longText' }] }), 'fields.0.type', 'immutable');
      expect(ok(await h.patch(`/forms/${f.id}`, { fields: [{ id: f.fields[0].id, type: 'shortText', title: 'Same type' }] })).fields[0].title).toBe('Same type');
      invalid(await h.patch(`/forms/${f.id}`, { fields: [{ title: 'No type' }] }), 'fields.0.type', 'required');
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [{ type: 'email' }] }), 'fields.0.title', 'required');
    });

    it('choices: a choice type needs 1-100 of them; the other types take none (an empty list is accepted); choice labels 1-255 characters after trimming', async () => {
      const h = H();
      const base = { meta: { title: 'X' } };
      invalid(await h.post('/forms', { ...base, fields: [{ type: 'singleChoice', title: 'No choices' }] }), 'fields.0.choices', 'required');
      invalid(await h.post('/forms', { ...base, fields: [{ type: 'multipleChoice', title: 'Empty', choices: [] }] }), 'fields.0.choices', 'too_small');
      invalid(await h.post('/forms', { ...base, fields: [text('With choices', { choices: [{ label: 'a' }] })] }), 'fields.0.choices', 'not_allowed');
      expect((await form(h, { fields: [text('Empty ok', { choices: [] })] })).fields[0].choices).toEqual([]);
      const f = await form(h, { fields: [pick('Labels', [`  ${'l'.repeat(255)}  `])] });
      expect(f.fields[0].choices[0].label).toBe('l'.repeat(255));
      invalid(await h.post('/forms', { ...base, fields: [pick('Long', ['l'.repeat(256)])] }), 'fields.0.choices.0.label');
      invalid(await h.post('/forms', { ...base, fields: [pick('Blank', ['  '])] }), 'fields.0.choices.0.label');
      invalid(await h.post('/forms', { ...base, fields: [{ type: 'singleChoice', title: 'Extra', choices: [{ label: 'a', value: 1 }] }] }), 'fields.0.choices.0');
    });

    it('question shape is validated exactly: title 1-1000 characters after trimming, description at most 5,000 or null, required boolean, no unknown keys', async () => {
      const h = H();
      const base = { meta: { title: 'X' } };
      const f = await form(h, { fields: [text(`  ${'q'.repeat(1000)}  `, { description: 'd'.repeat(5000) })] });
      expect(f.fields[0].title).toBe('q'.repeat(1000));
      invalid(await h.post('/forms', { ...base, fields: [text('q'.repeat(1001))] }), 'fields.0.title');
      invalid(await h.post('/forms', { ...base, fields: [text('  ')] }), 'fields.0.title');
      invalid(await h.post('/forms', { ...base, fields: [text('ok', { description: 'd'.repeat(5001) })] }), 'fields.0.description');
      invalid(await h.post('/forms', { ...base, fields: [text('ok', { required: 'yes' })] }), 'fields.0.required');
      invalid(await h.post('/forms', { ...base, fields: [text('ok', { placeholder: 'x' })] }), 'fields.0', 'unrecognized_keys');
      invalid(await h.post('/forms', { ...base, fields: ['just a string'] }), 'fields.0');
      invalid(await h.post('/forms', { ...base, fields: { type: 'shortText', title: 'not an array' } }), 'fields');
    });

    it('the questions of a form are at most 768 KiB as JSON (so every event of the form fits the 1 MiB webhook payload cap): more is 400 too_big', async () => {
      const h = H();
      const long = (n: number) => Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, '0')}${'c'.repeat(252)}`).slice(0, n);
      // 30 questions × 100 choices × 255 characters ≈ 0.8 MB: each question is within its own limits, the whole is not.
      const r = await h.post('/forms', { meta: { title: 'Huge' }, fields: Array.from({ length: 30 }, (_, i) => pick(`Q${i}`, long(100))) });
      invalid(r, 'fields', 'too_big');
      const f = await form(h, { fields: Array.from({ length: 20 }, (_, i) => pick(`Q${i}`, long(100))) });
      expect(f.fields).toHaveLength(20);
      invalid(await h.patch(`/forms/${f.id}`, { fields: [...f.fields.map((q: any) => ({ id: q.id })), ...Array.from({ length: 10 }, (_, i) => pick(`R${i}`, long(100)))] }), 'fields', 'too_big');
      expect((await stored(h, f.id)).fields).toHaveLength(20);
    });

    it('a refused PATCH writes nothing: other fields sent beside an invalid question stay as they were, and no form.updated is emitted', async () => {
      const h = H();
      const f = await form(h);
      const { result, events } = await during(h, () => h.patch(`/forms/${f.id}`, { meta: { title: 'Half' }, multiSubmit: true, fields: [{ id: 'nosuchquestion2' }] }));
      invalid(result, 'fields.0.id', 'unknown_question');
      expect(ofType(events, 'form.updated', f.id)).toEqual([]);
      expect(await stored(h, f.id)).toEqual(f);
    });
  });

  describe(`[${factory.name}] v3 Form: automation (task needs targetStatusId and targetListId in the same request)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    let tp: { statusId: string; listId: string };
    let tq: { statusId: string; listId: string };
    beforeAll(async () => {
      p = await H().project({ name: 'Intake P', members: [H().a.regular.id] });
      q = await H().project({ name: 'Intake Q', members: [H().a.regular.id] });
      tp = await targets(H(), p.id);
      tq = await targets(H(), q.id);
    });

    it('automation is task, doc, message, checkin or null (a plain form, the default); anything else is refused', async () => {
      const h = H();
      for (const a of ['doc', 'message', 'checkin']) expect((await form(h, { automation: a })).automation).toBe(a);
      expect((await form(h, { automation: null })).automation).toBeNull();
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], automation: 'email' }), 'automation');
    });

    it('create with automation task and both targets → 201; GET shows both', async () => {
      const h = H();
      const f = await form(h, { automation: 'task', targetStatusId: tp.statusId, targetListId: tp.listId });
      expect(f).toMatchObject({ automation: 'task', targetStatusId: tp.statusId, targetListId: tp.listId });
      expect(await stored(h, f.id)).toMatchObject({ automation: 'task', targetStatusId: tp.statusId, targetListId: tp.listId });
    });

    it('create with automation task without targetStatusId, targetListId or both → 400 required naming each missing one', async () => {
      const h = H();
      const base = { meta: { title: 'X' }, fields: [text()], automation: 'task' };
      invalid(await h.post('/forms', { ...base, targetListId: tp.listId }), 'targetStatusId', 'required');
      invalid(await h.post('/forms', { ...base, targetStatusId: tp.statusId }), 'targetListId', 'required');
      const both = await h.post('/forms', base);
      invalid(both, 'targetStatusId', 'required');
      invalid(both, 'targetListId', 'required');
      invalid(await h.post('/forms', { ...base, targetStatusId: tp.statusId, targetListId: null }), 'targetListId', 'required');
    });

    it('PATCH setting automation to task without both targets in the same request → 400, even when the form already held targets', async () => {
      const h = H();
      const plain = await form(h);
      invalid(await h.patch(`/forms/${plain.id}`, { automation: 'task' }), 'targetStatusId', 'required');
      invalid(await h.patch(`/forms/${plain.id}`, { automation: 'task', targetStatusId: tp.statusId }), 'targetListId', 'required');
      expect((await stored(h, plain.id)).automation).toBeNull();
      const t = await form(h, { automation: 'task', targetStatusId: tp.statusId, targetListId: tp.listId });
      invalid(await h.patch(`/forms/${t.id}`, { automation: 'task', targetListId: tp.listId }), 'targetStatusId', 'required');
      const on = ok(await h.patch(`/forms/${plain.id}`, { automation: 'task', targetStatusId: tp.statusId, targetListId: tp.listId }));
      expect(on).toMatchObject({ automation: 'task', targetStatusId: tp.statusId, targetListId: tp.listId });
    });

    it('PATCH of one target on an existing task automation is accepted when the pair stays in one project; clearing one is 400 required', async () => {
      const h = H();
      const f = await form(h, { automation: 'task', targetStatusId: tp.statusId, targetListId: tp.listId });
      const other = ok(await h.post('/lists', { name: 'Other intake', projectId: p.id }), 201);
      const u = ok(await h.patch(`/forms/${f.id}`, { targetListId: other.id }));
      expect(u).toMatchObject({ automation: 'task', targetStatusId: tp.statusId, targetListId: other.id });
      invalid(await h.patch(`/forms/${f.id}`, { targetListId: tq.listId }), 'targetListId', 'wrong_project');
      invalid(await h.patch(`/forms/${f.id}`, { targetStatusId: null }), 'targetStatusId', 'required');
      expect(await stored(h, f.id)).toMatchObject({ automation: 'task', targetStatusId: tp.statusId, targetListId: other.id });
    });

    it('the status and the list must be of one project, and of the form\'s project when it has one (400 wrong_project)', async () => {
      const h = H();
      const base = { meta: { title: 'X' }, fields: [text()], automation: 'task' };
      invalid(await h.post('/forms', { ...base, targetStatusId: tp.statusId, targetListId: tq.listId }), 'targetListId', 'wrong_project');
      invalid(await h.post('/forms', { ...base, projectId: q.id, targetStatusId: tp.statusId, targetListId: tp.listId }), 'targetStatusId', 'wrong_project');
      const f = await form(h, { projectId: p.id, automation: 'task', targetStatusId: tp.statusId, targetListId: tp.listId });
      invalid(await h.patch(`/forms/${f.id}`, { projectId: q.id }), 'targetStatusId', 'wrong_project');
      const moved = ok(await h.patch(`/forms/${f.id}`, { projectId: q.id, automation: 'task', targetStatusId: tq.statusId, targetListId: tq.listId }));
      expect(moved).toMatchObject({ projectId: q.id, targetStatusId: tq.statusId, targetListId: tq.listId });
      expect(ok(await h.patch(`/forms/${f.id}`, { projectId: null })).projectId).toBeNull();
    });

    it('targets must exist in this workspace: an unknown or another workspace\'s status or list is 404 resource_not_found naming the field', async () => {
      const h = H();
      const pb = await h.project({ name: 'Beta intake' }, h.b.owner.token);
      const bStatus = ok(await h.get(`/projects/${pb.id}`, { token: h.b.owner.token })).defaultStatusId;
      const bList = ok(await h.post('/lists', { name: 'Beta list', projectId: pb.id }, { token: h.b.owner.token }), 201).id;
      const base = { meta: { title: 'X' }, fields: [text()], automation: 'task' };
      expect(problem(await h.post('/forms', { ...base, targetStatusId: bStatus, targetListId: tp.listId }), 404, 'resource_not_found').field).toBe('targetStatusId');
      expect(problem(await h.post('/forms', { ...base, targetStatusId: tp.statusId, targetListId: bList }), 404, 'resource_not_found').field).toBe('targetListId');
      expect(problem(await h.post('/forms', { ...base, targetStatusId: 'nosuchstatus1', targetListId: tp.listId }), 404, 'resource_not_found').field).toBe('targetStatusId');
    });

    it('targets belong to the task automation only: sent with another automation they are 400 not_allowed; switching automation away clears them', async () => {
      const h = H();
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], automation: 'doc', targetStatusId: tp.statusId }), 'targetStatusId', 'not_allowed');
      invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], targetListId: tp.listId }), 'targetListId', 'not_allowed');
      const f = await form(h, { automation: 'task', targetStatusId: tp.statusId, targetListId: tp.listId });
      invalid(await h.patch(`/forms/${f.id}`, { automation: 'message', targetListId: tp.listId }), 'targetListId', 'not_allowed');
      const u = ok(await h.patch(`/forms/${f.id}`, { automation: 'doc' }));
      expect(u).toMatchObject({ automation: 'doc', targetStatusId: null, targetListId: null });
      const plain = await form(h);
      invalid(await h.patch(`/forms/${plain.id}`, { targetListId: tp.listId }), 'targetListId', 'not_allowed');
    });

    it('a target the caller cannot open (a project they are not in) is 403 project_access_denied', async () => {
      const h = H();
      const closed = await h.project({ name: 'Closed intake', accessType: 'limited' });
      const tc = await targets(h, closed.id);
      problem(await h.get(`/projects/${closed.id}`, { token: h.a.regular.token }), 403, 'project_access_denied');
      problem(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], automation: 'task', targetStatusId: tc.statusId, targetListId: tc.listId }, { token: h.a.regular.token }), 403, 'project_access_denied');
    });

    it('deleting the target list or status ends the task automation of the forms aiming at it (automation and targets null, form.updated)', async () => {
      const h = H();
      const t = await targets(h, p.id);
      const byList = await form(h, { automation: 'task', targetStatusId: tp.statusId, targetListId: t.listId });
      const { events } = await during(h, () => h.del(`/lists/${t.listId}`));
      expect(ofType(events, 'form.updated', byList.id)).toHaveLength(1);
      expect(await stored(h, byList.id)).toMatchObject({ automation: null, targetStatusId: null, targetListId: null });
      const st = ok(await h.post('/statuses', { name: 'Triage', projectId: p.id }), 201);
      const byStatus = await form(h, { automation: 'task', targetStatusId: st.id, targetListId: tp.listId });
      ok(await h.del(`/forms/${byStatus.id}`), 204);
      const gone = await during(h, () => h.del(`/statuses/${st.id}`));
      expect(ofType(gone.events, 'form.updated', byStatus.id)).toHaveLength(1);
      const back = ok(await h.post(`/forms/${byStatus.id}/restore`));
      expect(back).toMatchObject({ automation: null, targetStatusId: null, targetListId: null });
    });
  });

  describe(`[${factory.name}] v3 Form: after-submit object (afterSubmit; snake_case keys, stored verbatim)`, () => {
    const H = harnessPerDescribe(factory);

    it('heading and body_text with the optional image_url, redirect_url and auto_reply_email are stored verbatim (snake_case keys, untrimmed text, omitted keys stay omitted)', async () => {
      const h = H();
      const full = {
        heading: '  Thanks!  ', body_text: 'We read every answer.\n', image_url: 'https://cdn.example.com/thanks.png',
        redirect_url: 'https://example.com/next', auto_reply_email: { subject: 'Got it', body: 'Hello,\nthanks.' },
      };
      const f = await form(h, { afterSubmit: full });
      expect(f.afterSubmit).toEqual(full);
      expect((await stored(h, f.id)).afterSubmit).toEqual(full);
      const bare = await form(h, { afterSubmit: { heading: 'Done', body_text: '' } });
      expect(bare.afterSubmit).toEqual({ heading: 'Done', body_text: '' });
      expect(Object.keys((await stored(h, bare.id)).afterSubmit).sort()).toEqual(['body_text', 'heading']);
    });

    it('PATCH afterSubmit replaces the whole object; null clears it (the default)', async () => {
      const h = H();
      const f = await form(h, { afterSubmit: { heading: 'One', body_text: 'first', image_url: 'https://cdn.example.com/1.png' } });
      const u = ok(await h.patch(`/forms/${f.id}`, { afterSubmit: { heading: 'Two', body_text: 'second' } }));
      expect(u.afterSubmit).toEqual({ heading: 'Two', body_text: 'second' });
      expect(ok(await h.patch(`/forms/${f.id}`, { afterSubmit: null })).afterSubmit).toBeNull();
    });

    it('validated exactly: heading (non-blank, at most 255) and body_text (at most 10,000) required; URLs http(s) of at most 2048; auto_reply_email {subject, body}; camelCase or unknown keys refused', async () => {
      const h = H();
      const bad = async (afterSubmit: unknown, field: string, code?: string) => invalid(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], afterSubmit }), field, code);
      await bad({ body_text: 'x' }, 'afterSubmit.heading');
      await bad({ heading: 'x' }, 'afterSubmit.body_text');
      await bad({ heading: '   ', body_text: 'x' }, 'afterSubmit.heading');
      await bad({ heading: 'h'.repeat(256), body_text: 'x' }, 'afterSubmit.heading');
      await bad({ heading: 'x', body_text: 'b'.repeat(10_001) }, 'afterSubmit.body_text');
      await bad({ heading: 'x', bodyText: 'camel' }, 'afterSubmit', 'unrecognized_keys');
      await bad({ heading: 'x', body_text: 'x', confetti: true }, 'afterSubmit');
      await bad({ heading: 'x', body_text: 'x', image_url: 'ftp://cdn.example.com/a.png' }, 'afterSubmit.image_url');
      await bad({ heading: 'x', body_text: 'x', redirect_url: 'not a url' }, 'afterSubmit.redirect_url');
      await bad({ heading: 'x', body_text: 'x', redirect_url: `https://example.com/${'p'.repeat(2048)}` }, 'afterSubmit.redirect_url');
      await bad({ heading: 'x', body_text: 'x', auto_reply_email: 'yes' }, 'afterSubmit.auto_reply_email');
      await bad({ heading: 'x', body_text: 'x', auto_reply_email: { subject: 'Hi' } }, 'afterSubmit.auto_reply_email.body');
      await bad({ heading: 'x', body_text: 'x', auto_reply_email: { subject: 's'.repeat(256), body: 'b' } }, 'afterSubmit.auto_reply_email.subject');
      await bad('Thanks', 'afterSubmit');
      const ok1 = await form(h, { afterSubmit: { heading: 'h'.repeat(255), body_text: 'b'.repeat(10_000), image_url: null, redirect_url: null, auto_reply_email: null } });
      expect(ok1.afterSubmit).toEqual({ heading: 'h'.repeat(255), body_text: 'b'.repeat(10_000), image_url: null, redirect_url: null, auto_reply_email: null });
    });
  });

  describe(`[${factory.name}] v3 Form: url (a public link; null until shared)`, () => {
    const H = harnessPerDescribe(factory);

    it('url is null until the form is shared (isShared true); sharing gives a public link, unsharing makes it null again', async () => {
      const h = H();
      const f = await form(h);
      expect(f).toMatchObject({ isShared: false, url: null });
      const s = ok(await h.patch(`/forms/${f.id}`, { isShared: true }));
      expect(s.isShared).toBe(true);
      expect(s.url).toMatch(/^\/f\/[0-9A-Za-z]{22}$/);
      expect((await stored(h, f.id)).url).toBe(s.url);
      expect(ok(await h.patch(`/forms/${f.id}`, { isShared: false }))).toMatchObject({ isShared: false, url: null });
    });

    it('the link is stable: sharing again (or a PATCH isShared true while shared) gives the same url; each form has its own', async () => {
      const h = H();
      const f = await form(h, { isShared: true });
      expect(f.url).toMatch(/^\/f\/[0-9A-Za-z]{22}$/);
      expect(ok(await h.patch(`/forms/${f.id}`, { isShared: true })).url).toBe(f.url);
      ok(await h.patch(`/forms/${f.id}`, { isShared: false }));
      expect(ok(await h.patch(`/forms/${f.id}`, { isShared: true })).url).toBe(f.url);
      const g = await form(h, { isShared: true });
      expect(g.url).not.toBe(f.url);
    });

    it('url is read-only (a url sent alone is 400 empty_update); isShared must be a boolean', async () => {
      const h = H();
      const f = await form(h);
      problem(await h.patch(`/forms/${f.id}`, { url: '/f/mine' }), 400, 'empty_update');
      invalid(await h.patch(`/forms/${f.id}`, { isShared: 'yes' }), 'isShared');
      invalid(await h.patch(`/forms/${f.id}`, { isShared: null }), 'isShared');
      expect((await stored(h, f.id)).url).toBeNull();
    });
  });

  describe(`[${factory.name}] v3 Form: visibility (workspace-wide; projectId an optional association that does not affect visibility)`, () => {
    const H = harnessPerDescribe(factory);
    let closed: any;
    beforeAll(async () => {
      closed = await H().project({ name: 'Closed forms', accessType: 'limited' });
    });

    it('a member who cannot open the form\'s project still lists and reads the form (and changes it, per the role)', async () => {
      const h = H();
      problem(await h.get(`/projects/${closed.id}`, { token: h.a.regular.token }), 403, 'project_access_denied');
      const f = await form(h, { projectId: closed.id });
      expect(f.projectId).toBe(closed.id);
      const token = h.a.regular.token;
      expect(ok(await h.get(`/forms/${f.id}`, { token })).id).toBe(f.id);
      expect(await listIds(h, '/forms?limit=200', token)).toContain(f.id);
      expect(await listIds(h, `/forms?projectId[eq]=${closed.id}`, token)).toEqual([f.id]);
      expect(ok(await h.patch(`/forms/${f.id}`, { multiSubmit: true }, { token })).multiSubmit).toBe(true);
      // The project itself stays closed to them: the expand shows nothing.
      expect(ok(await h.get(`/forms/${f.id}?expand=project`, { token })).project).toBeNull();
      expect(ok(await h.get(`/forms/${f.id}?expand=project`)).project.id).toBe(closed.id);
    });

    it('projectId is optional, must be a project of this workspace (404 naming projectId), can change and be cleared; associating a project the caller cannot open is 403', async () => {
      const h = H();
      const open = await h.project({ name: 'Open forms' });
      const f = await form(h);
      expect(f.projectId).toBeNull();
      const pb = await h.project({ name: 'Beta forms' }, h.b.owner.token);
      expect(problem(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], projectId: pb.id }), 404, 'resource_not_found').field).toBe('projectId');
      expect(problem(await h.patch(`/forms/${f.id}`, { projectId: 'nosuchproject1' }), 404, 'resource_not_found').field).toBe('projectId');
      expect(ok(await h.patch(`/forms/${f.id}`, { projectId: open.id })).projectId).toBe(open.id);
      expect(ok(await h.patch(`/forms/${f.id}`, { projectId: null })).projectId).toBeNull();
      problem(await h.post('/forms', { meta: { title: 'X' }, fields: [text()], projectId: closed.id }, { token: h.a.regular.token }), 403, 'project_access_denied');
    });

    it('another workspace\'s forms are unknown ids (404 on GET, PATCH, DELETE, restore) and never listed', async () => {
      const h = H();
      const f = await form(h);
      const token = h.b.owner.token;
      problem(await h.get(`/forms/${f.id}`, { token }), 404, 'resource_not_found');
      problem(await h.patch(`/forms/${f.id}`, { multiSubmit: true }, { token }), 404, 'resource_not_found');
      problem(await h.del(`/forms/${f.id}`, { token }), 404, 'resource_not_found');
      problem(await h.post(`/forms/${f.id}/restore`, undefined, { token }), 404, 'resource_not_found');
      expect(await listIds(h, '/forms?limit=200', token)).not.toContain(f.id);
      const theirs = await form(h, {}, token);
      expect(await listIds(h, '/forms?limit=200', token)).toEqual([theirs.id]);
      expect(await listIds(h, '/forms?limit=200')).not.toContain(theirs.id);
      expect((await stored(h, f.id)).multiSubmit).toBe(false);
    });

    it('Role policy: regular members read, write, delete and restore forms; clients (guests) have no access (403 permission_denied)', async () => {
      const h = H();
      const token = h.a.regular.token;
      const f = await form(h, {}, token);
      ok(await h.patch(`/forms/${f.id}`, { docAccessType: 'limited' }, { token }));
      ok(await h.del(`/forms/${f.id}`, { token }), 204);
      ok(await h.post(`/forms/${f.id}/restore`, undefined, { token }));
      const c = h.a.client.token;
      problem(await h.get('/forms', { token: c }), 403, 'permission_denied');
      problem(await h.get(`/forms/${f.id}`, { token: c }), 403, 'permission_denied');
      problem(await h.post('/forms', { meta: { title: 'X' }, fields: [text()] }, { token: c }), 403, 'permission_denied');
      problem(await h.patch(`/forms/${f.id}`, { multiSubmit: true }, { token: c }), 403, 'permission_denied');
      problem(await h.del(`/forms/${f.id}`, { token: c }), 403, 'permission_denied');
      expect((await stored(h, f.id)).multiSubmit).toBe(false);
    });

    it('Authentication rule 4: scope resource forms — forms:read lists and reads; create and update need forms:write; delete and restore need forms:delete', async () => {
      const h = H();
      const f = await form(h);
      const read = (await h.api.admin.issueToken(h.a.regular.id, { scopes: ['forms:read'] })).token;
      const write = (await h.api.admin.issueToken(h.a.regular.id, { scopes: ['forms:write'] })).token;
      const del = (await h.api.admin.issueToken(h.a.regular.id, { scopes: ['forms:delete'] })).token;
      expect(await listIds(h, '/forms?limit=200', read)).toContain(f.id);
      ok(await h.get(`/forms/${f.id}`, { token: read }));
      problem(await h.post('/forms', { meta: { title: 'X' }, fields: [text()] }, { token: read }), 403, 'permission_denied');
      problem(await h.patch(`/forms/${f.id}`, { multiSubmit: true }, { token: read }), 403, 'permission_denied');
      problem(await h.del(`/forms/${f.id}`, { token: write }), 403, 'permission_denied');
      const mine = ok(await h.post('/forms', { meta: { title: 'Scoped' }, fields: [text()] }, { token: write }), 201);
      ok(await h.patch(`/forms/${mine.id}`, { multiSubmit: true }, { token: write }));
      ok(await h.del(`/forms/${mine.id}`, { token: del }), 204);
      problem(await h.post(`/forms/${mine.id}/restore`, undefined, { token: write }), 403, 'permission_denied');
      ok(await h.post(`/forms/${mine.id}/restore`, undefined, { token: del }));
    });
  });

  describe(`[${factory.name}] v3 Form: soft delete and restore (States and transitions; Events form.*)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Events P' });
    });

    it('create, update, delete and restore emit form.created, form.updated, form.removed and form.restored with the form as payload and its projectId', async () => {
      const h = H();
      const c = await during(h, () => form(h, { projectId: p.id }));
      const f = c.result;
      const [created] = ofType(c.events, 'form.created', f.id);
      expect(created.payload.form).toEqual(f);
      expect(created.projectId).toBe(p.id);
      expect(created.aggregateType).toBe('form');
      const u = await during(h, () => h.patch(`/forms/${f.id}`, { meta: { title: 'Changed' } }));
      expect(ofType(u.events, 'form.updated', f.id).map((e) => e.payload.form)).toEqual([u.result.body]);
      const d = await during(h, () => h.del(`/forms/${f.id}`));
      const [removed] = ofType(d.events, 'form.removed', f.id);
      expect(removed.payload.form.purgeAt).toBeTypeOf('string');
      expect(removed.payload.form.deletedById).toBe(h.a.owner.id);
      const r = await during(h, () => h.post(`/forms/${f.id}/restore`));
      const [restored] = ofType(r.events, 'form.restored', f.id);
      expect(restored.payload.form).toEqual(r.result.body);
      expect(restored.payload.form.purgeAt).toBeNull();
      const plain = await during(h, () => form(h));
      expect(ofType(plain.events, 'form.created', plain.result.id)[0].projectId).toBeNull();
    });

    it('DELETE → 204: gone from GET (404) and lists, listed by purgeAt[notNull] with purgeAt = deletion + 30 days and deletedById the deleter', async () => {
      const h = H();
      const f = await form(h, {}, h.a.regular.token);
      ok(await h.del(`/forms/${f.id}`, { token: h.a.regular.token }), 204);
      problem(await h.get(`/forms/${f.id}`), 404, 'resource_not_found');
      problem(await h.patch(`/forms/${f.id}`, { multiSubmit: true }), 404, 'resource_not_found');
      expect(await listIds(h, '/forms?limit=200')).not.toContain(f.id);
      const trashed = ok(await h.get('/forms?purgeAt[notNull]=true&limit=200')).data.find((x: any) => x.id === f.id);
      expect(trashed.purgeAt).toBe(new Date(h.clock.now() + 30 * DAY).toISOString());
      expect(trashed.deletedById).toBe(h.a.regular.id);
      expect(trashed.fields).toEqual(f.fields);
    });

    it('restore brings it back with its questions (200, purgeAt and deletedById null); restoring a live form succeeds and changes nothing', async () => {
      const h = H();
      const f = await form(h, { fields: [text('Kept'), pick('Also kept', ['a', 'b'])] });
      ok(await h.del(`/forms/${f.id}`), 204);
      const back = ok(await h.post(`/forms/${f.id}/restore`));
      expect(back).toMatchObject({ id: f.id, purgeAt: null, deletedById: null, fields: f.fields });
      expect(await listIds(h, '/forms?limit=200')).toContain(f.id);
      const again = await during(h, () => h.post(`/forms/${f.id}/restore`));
      expect(ok(again.result)).toEqual(back);
      expect(again.events).toEqual([]);
    });

    it('30 days after deletion the form is purged for good (form.force_deleted); restore is then 404', async () => {
      const h = H();
      const f = await form(h, { projectId: p.id });
      ok(await h.del(`/forms/${f.id}`), 204);
      h.clock.advance(30 * DAY + 1000);
      const { events } = await during(h, () => h.api.jobs.purge());
      const [gone] = ofType(events, 'form.force_deleted', f.id);
      expect(gone.payload.form.id).toBe(f.id);
      expect(gone.projectId).toBe(p.id);
      problem(await h.post(`/forms/${f.id}/restore`), 404, 'resource_not_found');
      expect(await h.store.db.selectFrom('forms').select('id').where('id', '=', f.id).execute()).toEqual([]);
    });

    it('purging a project keeps its forms (workspace-wide) without the association, and ends task automations aimed into it', async () => {
      const h = H();
      const doomed = await h.project({ name: 'Doomed forms' });
      const t = await targets(h, doomed.id);
      const f = await form(h, { projectId: doomed.id, automation: 'task', targetStatusId: t.statusId, targetListId: t.listId });
      const loose = await form(h, { automation: 'task', targetStatusId: t.statusId, targetListId: t.listId });
      ok(await h.del(`/projects/${doomed.id}`), 204);
      h.clock.advance(30 * DAY + 1000);
      const { events } = await during(h, () => h.api.jobs.purge());
      expect(ofType(events, 'form.updated', f.id).length).toBeGreaterThan(0);
      expect(await stored(h, f.id)).toMatchObject({ projectId: null, automation: null, targetStatusId: null, targetListId: null });
      expect(await stored(h, loose.id)).toMatchObject({ automation: null, targetStatusId: null, targetListId: null });
    });
  });

  describe(`[${factory.name}] v3 Form: filters, default sort createdAt, expand`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    let f1: any;
    let f2: any;
    let f3: any;
    beforeAll(async () => {
      const h = H();
      p = await h.project({ name: 'Filter forms P' });
      q = await h.project({ name: 'Filter forms Q', members: [h.a.regular.id] });
      const t = await targets(h, p.id);
      f1 = await form(h, { projectId: p.id, automation: 'task', targetStatusId: t.statusId, targetListId: t.listId });
      h.clock.advance(1000);
      f2 = await form(h, { projectId: q.id, automation: 'doc', docAccessType: 'private' }, h.a.regular.token);
      h.clock.advance(1000);
      f3 = await form(h, { docAccessType: 'limited' });
      h.clock.advance(1000);
      // An update does not move a form in the default order.
      ok(await h.patch(`/forms/${f1.id}`, { meta: { title: 'Updated last' } }));
    });

    it('default sort is createdAt ascending; sort=-createdAt and sort=name work', async () => {
      const h = H();
      expect(await listIds(h, '/forms')).toEqual([f1.id, f2.id, f3.id]);
      expect(await listIds(h, '/forms?sort=-createdAt')).toEqual([f3.id, f2.id, f1.id]);
      expect((await listIds(h, '/forms?sort=name'))[2]).toBe(f1.id);
    });

    it('automation[eq|in], docAccessType[eq|in], projectId[eq|in], createdById[eq|in], createdAt[gt|gte|lt|lte]', async () => {
      const h = H();
      expect(await listIds(h, '/forms?automation[eq]=task')).toEqual([f1.id]);
      expect(await listIds(h, '/forms?automation[in]=task,doc')).toEqual([f1.id, f2.id]);
      expect(await listIds(h, '/forms?docAccessType[eq]=public')).toEqual([f1.id]);
      expect(await listIds(h, '/forms?docAccessType[in]=private,limited')).toEqual([f2.id, f3.id]);
      expect(await listIds(h, `/forms?projectId[eq]=${q.id}`)).toEqual([f2.id]);
      expect(await listIds(h, `/forms?projectId[in]=${p.id},${q.id}`)).toEqual([f1.id, f2.id]);
      expect(await listIds(h, `/forms?createdById[eq]=${h.a.regular.id}`)).toEqual([f2.id]);
      expect(await listIds(h, `/forms?createdById[in]=${h.a.owner.id}`)).toEqual([f1.id, f3.id]);
      expect(await listIds(h, `/forms?createdAt[gt]=${encodeURIComponent(f1.createdAt)}`)).toEqual([f2.id, f3.id]);
      expect(await listIds(h, `/forms?createdAt[gte]=${encodeURIComponent(f2.createdAt)}`)).toEqual([f2.id, f3.id]);
      expect(await listIds(h, `/forms?createdAt[lt]=${encodeURIComponent(f2.createdAt)}`)).toEqual([f1.id]);
      expect(await listIds(h, `/forms?createdAt[lte]=${encodeURIComponent(f2.createdAt)}`)).toEqual([f1.id, f2.id]);
      expect(sorted(await listIds(h, '/forms?purgeAt[null]=true'))).toEqual(sorted([f1.id, f2.id, f3.id]));
    });

    it('filters the spec does not list (name, targetStatusId, targetListId, isShared, updatedAt) and undeclared operators are 400 invalid_query_param', async () => {
      const h = H();
      for (const q of ['name[eq]=x', `targetStatusId[eq]=${f1.targetStatusId}`, `targetListId[eq]=${f1.targetListId}`, 'isShared[eq]=true', 'updatedAt[gt]=2026-01-01T00:00:00.000Z', 'automation[null]=true', 'projectId[null]=true', 'createdAt[eq]=2026-01-01T00:00:00.000Z']) {
        problem(await h.get(`/forms?${q}`), 400, 'invalid_query_param');
      }
    });

    it('expand: project, targetStatus, targetList, createdBy, createdByActor, updatedByActor, deletedBy; fields is not expandable', async () => {
      const h = H();
      const got = ok(await h.get(`/forms/${f1.id}?expand=project,targetStatus,targetList,createdBy,createdByActor,updatedByActor,deletedBy`));
      expect(got.project.id).toBe(p.id);
      expect(got.targetStatus.id).toBe(f1.targetStatusId);
      expect(got.targetList.id).toBe(f1.targetListId);
      expect(got.createdBy.id).toBe(h.a.owner.id);
      expect(got.createdByActor.id).toBe(f1.createdByActorId);
      expect(got.updatedByActor.id).toBe(f1.updatedByActorId);
      expect(got.deletedBy).toBeNull();
      expect(ok(await h.get(`/forms/${f3.id}?expand=project,targetStatus`))).toMatchObject({ project: null, targetStatus: null });
      problem(await h.get(`/forms/${f1.id}?expand=fields`), 400, 'expand_unknown_relation');
    });
  });
}
