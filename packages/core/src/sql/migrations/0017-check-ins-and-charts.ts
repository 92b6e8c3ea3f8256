import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { checkInRequestResource, checkInResource } from '../../resources/check-in.resource';
import { reportChartResource } from '../../resources/report-chart.resource';
import { createTable, tableOf } from './table';

/** Check-ins, check-in requests and report charts: tables from the declarations (their relation sets live in the links table). */
export function checkInsAndCharts(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, checkInRequestResource.table, tableOf(checkInRequestResource)).execute();
      await db.schema.createIndex('check_in_requests_project_created').on('check_in_requests').columns(['project_id', 'created_at', 'id']).execute();
      // Workspace-wide lists in their default order (-createdAt).
      await db.schema.createIndex('check_in_requests_team_created').on('check_in_requests').columns(['team_id', 'created_at', 'id']).execute();
      await createTable(db, d, checkInResource.table, tableOf(checkInResource)).execute();
      await db.schema.createIndex('check_ins_project_created').on('check_ins').columns(['project_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('check_ins_team_created').on('check_ins').columns(['team_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('check_ins_request').on('check_ins').columns(['check_in_request_id']).execute();
      await createTable(db, d, reportChartResource.table, tableOf(reportChartResource)).execute();
      await db.schema.createIndex('report_charts_team_name').on('report_charts').columns(['team_id', 'name', 'id']).execute();
    },
  };
}
