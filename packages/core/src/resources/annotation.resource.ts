import { z } from 'zod';
import { defineResource, RANGE } from './define-resource';
import { f } from './fields';

/*
 * Annotations (spec "Annotation"): a drawing or comment anchor on a file.
 * The position object is named `position` (its name is "not shown"). The
 * thread task is made when the first comment arrives (POST /messages with
 * annotationId; resources/message.resource.ts). Hard-deleted with its thread.
 */

export const ANNOTATION_TYPES = ['image', 'video'] as const;
export const SHAPES = ['POINT', 'RECTANGLE', 'OVAL'] as const;

const percent = z.number().finite().min(0, 'must be a percentage, 0-100').max(100, 'must be a percentage, 0-100');
const SIZED = ['RECTANGLE', 'OVAL'];

/**
 * `{}` (a bare anchor); `{shape: 'POINT', x, y}`; or `{shape: 'RECTANGLE' |
 * 'OVAL', x, y, width, height}` — percentages (0-100) of the file's
 * dimensions, a shape never past the right or bottom edge (`out_of_bounds`).
 * One object with the rules of each shape, so every refusal names its own
 * field and code.
 */
export const positionSchema = z
  .strictObject({ shape: z.enum(SHAPES).optional(), x: percent.optional(), y: percent.optional(), width: percent.optional(), height: percent.optional() })
  .superRefine((p, issue) => {
    const fail = (path: string, code: string, message: string) => issue.addIssue({ code: 'custom', path: [path], message, params: { code } });
    const given = (['x', 'y', 'width', 'height'] as const).filter((k) => p[k] !== undefined);
    if (p.shape === undefined) {
      if (given.length) fail('shape', 'required', 'a position with coordinates needs a shape: POINT, RECTANGLE or OVAL');
      return;
    }
    const needs = SIZED.includes(p.shape) ? (['x', 'y', 'width', 'height'] as const) : (['x', 'y'] as const);
    for (const k of needs) if (p[k] === undefined) fail(k, 'required', `a ${p.shape} needs ${needs.join(', ')}`);
    if (p.shape === 'POINT') for (const k of ['width', 'height'] as const) if (p[k] !== undefined) fail(k, 'not_allowed', 'a POINT has only x and y');
    if (SIZED.includes(p.shape)) {
      if (p.x !== undefined && p.width !== undefined && p.x + p.width > 100) fail('width', 'out_of_bounds', 'x + width must stay within 100');
      if (p.y !== undefined && p.height !== undefined && p.y + p.height > 100) fail('height', 'out_of_bounds', 'y + height must stay within 100');
    }
  });

export const annotationResource = defineResource({
  name: 'annotation',
  path: 'annotations',
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  fields: {
    type: f.enum(ANNOTATION_TYPES, { mode: 'createOnly', required: true }),
    fileId: f.ref('file', { mode: 'createOnly', required: true, onDelete: 'cascade' }),
    position: f.json(positionSchema),
    videoTimeSeconds: f.number({ min: 0, nullable: true }),
    taskId: f.readOnly('text', { nullable: true }),
    projectId: f.readOnly('text', { nullable: true, internal: true }),
    accessChatId: f.readOnly('text', { nullable: true, internal: true }),
    privateDoc: f.readOnly('boolean', { internal: true }),
    privateOwnerId: f.readOnly('text', { nullable: true, internal: true }),
  },
  projectField: 'projectId',
  projectFrom: 'fileId',
  // An annotation is seen by whoever sees its file.
  membersOnly: { links: 'chat.members', field: 'accessChatId' },
  privateTo: { field: 'privateDoc', value: true, owner: 'privateOwnerId' },
  filters: {
    fileId: { ops: ['eq', 'in'] },
    taskId: { ops: ['eq', 'in'] },
    videoTimeSeconds: { ops: ['eq', 'gt', 'gte', 'lt', 'lte', 'null', 'notNull'] },
    type: { ops: ['eq', 'in'] },
    createdAt: { ops: RANGE },
    updatedAt: { ops: RANGE },
  },
  defaultSort: 'createdAt',
  expand: {
    task: { kind: 'one', target: 'task', field: 'taskId' },
    messages: { kind: 'children', target: 'message', field: 'annotationId' },
  },
  hooks: {
    async beforeCreate(ctx, input) {
      const file = await ctx.mustGet('file', input.fileId!, 'fileId');
      await ctx.access.assertRecord(ctx.registry.get('file'), file);
      input.position ??= {};
      input.videoTimeSeconds ??= null;
      input.taskId = null;
      input.accessChatId = (file.accessChatId as string | null) ?? null;
      input.privateDoc = file.privateDoc === true;
      input.privateOwnerId = (file.ownerId as string | null) ?? null;
    },
  },
});
