import { z } from 'zod';
import type { WriteContext } from './hooks';
import { fieldError } from './rules';

/*
 * The questions of a form (spec "Form": `fields`; the structure of a question
 * is "not shown": docs/not-shown.md "Forms"). A question is
 * `{id, type, title, description, required, choices}`; choices (of the choice
 * types only) are `{id, label}`. Both are kept by id: `fields` replaces the
 * whole list, an entry with the id of one of the form's questions keeps that
 * question (the properties it sends replace, the ones it leaves out stay), an
 * entry without id is a new question, and every question left out is deleted
 * with its choices.
 */

/** Spec "Limits": a form holds 1-200 questions, each at most 100 choices. */
export const FORM_QUESTIONS_MIN = 1;
export const FORM_QUESTIONS_MAX = 200;
export const FORM_CHOICES_MAX = 100;
export const QUESTION_TITLE_MAX = 1000;
export const QUESTION_DESCRIPTION_MAX = 5000;
export const CHOICE_LABEL_MAX = 255;
/**
 * Largest `fields` as JSON, in bytes: with the other fields of a form (a few
 * dozen KiB at most) every event of the form stays under the 1 MiB webhook
 * payload cap, so a large form never counts as a failed delivery.
 */
export const FORM_FIELDS_MAX_BYTES = 768 * 1024;

export const QUESTION_TYPES = ['shortText', 'longText', 'singleChoice', 'multipleChoice', 'date', 'number', 'email', 'file', 'rating'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];
/** The types whose answers are picked from `choices`. */
export const CHOICE_TYPES: ReadonlySet<string> = new Set<QuestionType>(['singleChoice', 'multipleChoice']);

export interface Choice { id: string; label: string }
export interface Question {
  id: string;
  type: QuestionType;
  title: string;
  description: string | null;
  required: boolean;
  /** The choices of a choice type, in order; [] for the other types. */
  choices: Choice[];
}

const ID = z.string().regex(/^[0-9A-Za-z_!]+$/, 'must be an id').max(64);

/**
 * An array longer than the body reader parses arrives as a marker carrying
 * only its length (http/body.ts OversizedArray): refused as too big, like
 * any array over the limit.
 */
const notOversized = (max: number, what: string) => z.custom<unknown>((v) => Array.isArray(v) || v === null || typeof v !== 'object' || typeof (v as { length?: unknown }).length !== 'number', {
  message: `must hold at most ${max} ${what}`, params: { code: 'too_big' },
});

const choiceInput = z.strictObject({
  id: ID.optional(),
  label: z.string().trim().min(1, 'must not be blank').max(CHOICE_LABEL_MAX, `must be at most ${CHOICE_LABEL_MAX} characters`).optional(),
});

const choicesInput = notOversized(FORM_CHOICES_MAX, 'choices').pipe(
  z.array(choiceInput).max(FORM_CHOICES_MAX, `must hold at most ${FORM_CHOICES_MAX} choices`),
);

const questionInput = z.strictObject({
  id: ID.optional(),
  type: z.enum(QUESTION_TYPES).optional(),
  title: z.string().trim().min(1, 'must not be blank').max(QUESTION_TITLE_MAX, `must be at most ${QUESTION_TITLE_MAX} characters`).optional(),
  description: z.string().max(QUESTION_DESCRIPTION_MAX, `must be at most ${QUESTION_DESCRIPTION_MAX} characters`).nullable().optional(),
  required: z.boolean().optional(),
  choices: choicesInput.optional(),
});
export type QuestionInput = z.output<typeof questionInput>;

/** The body schema of `fields`: 1-200 questions (the element rules above). */
export const questionsSchema = z.array(questionInput)
  .min(FORM_QUESTIONS_MIN, `a form holds at least ${FORM_QUESTIONS_MIN} question`)
  .max(FORM_QUESTIONS_MAX, `a form holds at most ${FORM_QUESTIONS_MAX} questions`);

/**
 * The question list a body asks for, in order, against the form's current
 * questions (none on create). Ids sent must be questions of this form
 * (`unknown_question`), once each (`duplicate_question`), and keep their
 * type (`immutable`); a new question needs `type` and `title` (`required`);
 * choice types need 1-100 choices (`required`, `too_small`), other types
 * take none (`not_allowed`); choice ids likewise (`unknown_choice`,
 * `duplicate_choice`); a kept choice sent without `label` keeps its label, a
 * new one needs it (`required`). New questions and choices get ids. The result is at
 * most {@link FORM_FIELDS_MAX_BYTES} as JSON (`too_big`).
 */
export function resolveQuestions(ctx: WriteContext, sent: readonly QuestionInput[], current: readonly Question[]): Question[] {
  const byId = new Map(current.map((q) => [q.id, q]));
  const seen = new Set<string>();
  const out = sent.map((q, i): Question => {
    const at = `fields.${i}`;
    let old: Question | undefined;
    if (q.id !== undefined) {
      old = byId.get(q.id);
      if (!old) throw fieldError(`${at}.id`, 'unknown_question', 'is not a question of this form; leave id out for a new question');
      if (seen.has(q.id)) throw fieldError(`${at}.id`, 'duplicate_question', 'appears twice');
      seen.add(q.id);
      if (q.type !== undefined && q.type !== old.type) throw fieldError(`${at}.type`, 'immutable', 'a question keeps its type; add a new question (without id) instead');
    }
    const type = q.type ?? old?.type;
    if (type === undefined) throw fieldError(`${at}.type`, 'required', 'a new question needs a type');
    const title = q.title ?? old?.title;
    if (title === undefined) throw fieldError(`${at}.title`, 'required', 'a new question needs a title');
    let choices: Choice[];
    if (CHOICE_TYPES.has(type)) {
      if (q.choices === undefined && !old) throw fieldError(`${at}.choices`, 'required', `a ${type} question needs 1-${FORM_CHOICES_MAX} choices`);
      choices = q.choices === undefined ? old!.choices : resolveChoices(ctx, `${at}.choices`, q.choices, old?.choices ?? []);
      if (choices.length === 0) throw fieldError(`${at}.choices`, 'too_small', `a ${type} question needs at least 1 choice`);
    } else {
      if (q.choices !== undefined && q.choices.length > 0) throw fieldError(`${at}.choices`, 'not_allowed', `a ${type} question has no choices`);
      choices = [];
    }
    return {
      id: old?.id ?? ctx.ids.id(),
      type,
      title,
      description: q.description !== undefined ? q.description : (old?.description ?? null),
      required: q.required ?? old?.required ?? false,
      choices,
    };
  });
  const bytes = Buffer.byteLength(JSON.stringify(out));
  if (bytes > FORM_FIELDS_MAX_BYTES) throw fieldError('fields', 'too_big', `the questions come to ${bytes} bytes as JSON; a form holds at most ${FORM_FIELDS_MAX_BYTES}`);
  return out;
}

function resolveChoices(ctx: WriteContext, at: string, sent: ReadonlyArray<z.output<typeof choiceInput>>, current: readonly Choice[]): Choice[] {
  const known = new Set(current.map((c) => c.id));
  const seen = new Set<string>();
  return sent.map((c, j) => {
    if (c.id !== undefined) {
      if (!known.has(c.id)) throw fieldError(`${at}.${j}.id`, 'unknown_choice', 'is not a choice of this question; leave id out for a new choice');
      if (seen.has(c.id)) throw fieldError(`${at}.${j}.id`, 'duplicate_choice', 'appears twice');
      seen.add(c.id);
    }
    // A kept choice keeps its label unless one is sent; a new choice needs one.
    const label = c.label ?? (c.id !== undefined ? current.find((x) => x.id === c.id)!.label : undefined);
    if (label === undefined) throw fieldError(`${at}.${j}.label`, 'required', 'a new choice needs a label');
    return { id: c.id ?? ctx.ids.id(), label };
  });
}
