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

/**
 * `{}` (a bare anchor); `{shape: 'POINT', x, y}`; or `{shape: 'RECTANGLE' |
 * 'OVAL', x, y, width, height}` — percentages (0-100) of the file's
 * dimensions, a shape never past the right or bottom edge.
 */
export const positionSchema = z.union([
  z.strictObject({}),
  z.strictObject({ shape: z.literal('POINT'), x: percent, y: percent }),
  z.strictObject({ shape: z.enum(['RECTANGLE', 'OVAL']), x: percent, y: percent, width: percent, height: percent })
    .refine((p) => p.x + p.width <= 100 && p.y + p.height <= 100, { message: 'x + width and y + height must stay within 100', params: { code: 'out_of_bounds' } }),
]);

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
      input.privateOwnerId = (file.uploaderId as string | null) ?? null;
    },
  },
});
