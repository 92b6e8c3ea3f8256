import type { CustomRoute } from '../http/routes';
import { chatRoutes } from './chats';
import { documentRoutes } from './documents';
import { fileRoutes } from './files';
import { searchRoutes } from './search';
import { webhookRoutes } from './webhooks';

/** The routes beyond the standard operations, in matching order. */
export const builtinRoutes: readonly CustomRoute[] = [...searchRoutes, ...webhookRoutes, ...documentRoutes, ...chatRoutes, ...fileRoutes];
