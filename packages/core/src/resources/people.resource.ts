import { defineResource, RANGE, type RecordOf } from './define-resource';
import { z } from 'zod';
import { f } from './fields';
import { roleHooks, ROLE_NAME_MAX, INITIAL_SCREEN_MAX } from '../auth/roles';

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

/**
 * Roles (spec "Role"). Custom roles are created, changed and deleted here
 * (needs `manageRoles`); the four built-in roles (`editable: false`) accept a
 * change to `initialScreen` only and show their effective permissions. The
 * rules live in auth/roles.ts; decisions in docs/not-shown.md.
 */
const roleFields = {
  name: f.string({ trim: true, min: 1, max: ROLE_NAME_MAX, required: true }),
  editable: f.readOnly('boolean'),
  permissions: f.json(z.array(z.string().min(1).max(100)).max(1000, 'must hold at most 1000 permission names')),
  initialScreen: f.string({ trim: true, min: 1, max: INITIAL_SCREEN_MAX, nullable: true }),
};
/** A role as its hooks see it. */
export type RoleRecord = RecordOf<typeof roleFields>;

export const roleResource = defineResource({
  name: 'role',
  policy: { requires: { write: ['manageRoles'], delete: ['manageRoles'] } },
  path: 'roles',
  fields: roleFields,
  filters: {
    name: { ops: ['eq', 'contains', 'startsWith'] },
    editable: { ops: ['eq'] },
    createdAt: { ops: RANGE },
  },
  defaultSort: 'name',
  hooks: roleHooks,
});
