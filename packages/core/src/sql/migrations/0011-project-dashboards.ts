import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { projectDashboardResource } from '../../resources/dashboard.resource';
import { createTable, tableOf } from './table';

/** Project dashboards: the table from the declaration (widgets live in the row, so they go with it). */
export function projectDashboards(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, projectDashboardResource.table, tableOf(projectDashboardResource)).execute();
      await db.schema.createIndex('project_dashboards_project_created').on('project_dashboards').columns(['project_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('project_dashboards_team_updated').on('project_dashboards').columns(['team_id', 'updated_at', 'id']).execute();
    },
  };
}
