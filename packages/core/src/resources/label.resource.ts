import { ProblemError } from '../errors/problem';
import { defineResource, RANGE } from './define-resource';
import { f } from './fields';

/**
 * Labels: workspace-wide tags for tasks (fields not shown: docs/not-shown.md).
 * System default labels cannot be renamed or deleted (403 default_label_locked).
 */
export const labelResource = defineResource({
  name: 'label',
  // Regular members delete labels too; clients read them.
  policy: { regular: ['read', 'write', 'delete'], client: ['read'] },
  path: 'labels',
  fields: {
    name: f.string({ trim: true, min: 1, max: 100, required: true }),
    color: f.hexColor({ nullable: true }),
    isDefault: f.readOnly('boolean'),
    // The legacy v1.0 label type (spec "Legacy label (tag)"): 0 or 1, default 0 (docs/not-shown.md "Legacy v1.0 surface").
    type: f.integer({ min: 0, max: 1 }),
  },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    isDefault: { ops: ['eq'] },
    type: { ops: ['eq'] },
    createdAt: { ops: RANGE },
  },
  defaultSort: 'name',
  hooks: {
    beforeCreate(_ctx, input) {
      input.isDefault = false;
      input.type ??= 0;
    },
    beforeUpdate(_ctx, current, patch) {
      if (current.isDefault && 'name' in patch && patch.name !== current.name) {
        throw new ProblemError('default_label_locked', `The default label '${current.name}' cannot be renamed`);
      }
    },
    beforeDelete(_ctx, rec) {
      if (rec.isDefault) throw new ProblemError('default_label_locked', `The default label '${rec.name}' cannot be deleted`);
    },
  },
});
