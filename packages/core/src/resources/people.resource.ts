import { defineResource, RANGE } from './define-resource';
import { z } from 'zod';
import { f } from './fields';

/** GET /actors/{id}: who wrote a record (spec "Actor"). */
export const actorResource = defineResource({
  name: 'actor',
  policy: { client: ['read'] },
  path: 'actors',
  // Spec "Actor": ids are UUIDs, a different id space.
  uuidIds: true,
  operations: { get: true },
  fields: {
    type: f.readOnly('text'),
    displayName: f.readOnly('text'),
    memberId: f.readOnly('text', { nullable: true }),
    agentId: f.readOnly('text', { nullable: true }),
    tombstonedAt: f.readOnly('timestamp', { nullable: true }),
  },
  filters: {},
  defaultSort: 'createdAt',
  expand: { member: { kind: 'one', target: 'member', field: 'memberId' } },
});

/** GET /members and /members/{id}: the people of the workspace (fields not shown: docs/not-shown.md). */
export const memberResource = defineResource({
  name: 'member',
  policy: { client: ['read'] },
  path: 'members',
  operations: { list: true, get: true },
  fields: {
    userId: f.readOnly('text'),
    name: f.readOnly('text'),
    email: f.readOnly('text', { nullable: true }),
    role: f.readOnly('text'),
    roleId: f.readOnly('text'),
    active: f.readOnly('boolean'),
  },
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    role: { ops: ['eq', 'in'] },
    roleId: { ops: ['eq', 'in'] },
    active: { ops: ['eq'] },
    createdAt: { ops: RANGE },
  },
  defaultSort: 'createdAt',
  expand: {
    roleRecord: { kind: 'one', target: 'role', field: 'roleId' },
  },
});
