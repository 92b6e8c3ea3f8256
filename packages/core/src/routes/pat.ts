import type { CustomRoute } from '../http/routes';

/** /personal-access-tokens: create, list, read, update, revoke (bodies not shown in the spec: docs/not-shown.md). */
export const patRoutes: CustomRoute[] = [];
