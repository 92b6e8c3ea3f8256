import type { CustomRoute } from '../http/routes';

/** Search routes (roles): the spec's Search operation; path not shown (docs/not-shown.md). */
export const searchRoutes: CustomRoute[] = [];
