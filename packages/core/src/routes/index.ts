import type { CustomRoute } from '../http/routes';
import { activityRoutes } from './activity';
import { chatRoutes } from './chats';
import { documentRoutes } from './documents';
import { fileRoutes } from './files';
import { projectRoutes } from './projects';
import { searchRoutes } from './search';
import { taskRoutes } from './tasks';
import { webhookRoutes } from './webhooks';

/** The routes beyond the standard operations, in matching order. */
export const builtinRoutes: readonly CustomRoute[] = [...searchRoutes, ...webhookRoutes, ...documentRoutes, ...chatRoutes, ...fileRoutes, ...activityRoutes, ...projectRoutes, ...taskRoutes];
