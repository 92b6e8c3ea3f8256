export { defineResource, commonFields, softDeleteFields, kebab, RANGE, type ResourcePolicy } from './define-resource';
export type { Resource, ResourceSpec, ResourceHooks, RecordOf, CommonRecord, FilterDef, FilterOp, ExpandDef, RelationDef, Rec, ColumnInfo } from './define-resource';
export { f, customFieldsSchema, snakeCase, type FieldDef, type StorageKind, type WriteMode } from './fields';
export { Registry } from './registry';
import { actorResource, memberResource } from './people.resource';
import { roleResource } from './role.resource';
import { labelResource } from './label.resource';
import { portfolioResource } from './portfolio.resource';
import { projectResource } from './project.resource';
import { statusResource } from './status.resource';
import { listResource } from './list.resource';
import { taskResource } from './task.resource';
import { webhookResource } from './webhook.resource';
import { personalAccessTokenResource } from './personal-access-token.resource';
import { checklistItemResource, checklistResource } from './checklist.resource';
import { documentFolderResource, documentResource } from './document.resource';
import { chatResource } from './chat.resource';
import { fileResource } from './file.resource';
import { annotationResource } from './annotation.resource';
import { messageResource } from './message.resource';
import { projectDashboardResource } from './dashboard.resource';
import { reminderResource } from './reminder.resource';
import { formResource } from './form.resource';
import { customFieldResource } from './custom-field.resource';
import { checkInRequestResource, checkInResource } from './check-in.resource';
import { reportChartResource } from './report-chart.resource';
import { recurringRuleResource } from './recurring-rule.resource';
import { goalGroupResource, goalResource } from './goal.resource';
import { timeEntryResource } from './time-entry.resource';
import { favoriteFolderResource, favoriteResource } from './favorite.resource';
import { projectFolderResource } from './project-folder.resource';
import { taskHandoffResource } from './task-handoff.resource';
import { presenceStatusResource } from './presence-status.resource';
import type { Resource } from './define-resource';

/** Every built-in resource of the v3 API. */
export const builtinResources: readonly Resource[] = [
  actorResource, memberResource, roleResource, labelResource, portfolioResource, projectResource, statusResource, listResource, taskResource, webhookResource,
  personalAccessTokenResource, checklistResource, checklistItemResource, documentFolderResource, documentResource, chatResource, fileResource, annotationResource, messageResource,
  projectDashboardResource,
  reminderResource,
  formResource,
  customFieldResource,
  checkInRequestResource, checkInResource, reportChartResource,
  recurringRuleResource,
  goalGroupResource, goalResource, timeEntryResource,
  projectFolderResource, taskHandoffResource, presenceStatusResource,
  favoriteFolderResource, favoriteResource,
];
export {
  actorResource, memberResource, roleResource, labelResource, portfolioResource, projectResource, statusResource, listResource, taskResource, webhookResource,
  personalAccessTokenResource, checklistResource, checklistItemResource, documentFolderResource, documentResource, chatResource, fileResource, annotationResource, messageResource,
  projectDashboardResource,
  reminderResource,
  formResource,
  customFieldResource,
  checkInRequestResource, checkInResource, reportChartResource,
  recurringRuleResource,
  goalGroupResource, goalResource, timeEntryResource,
  projectFolderResource, taskHandoffResource, presenceStatusResource,
  favoriteFolderResource, favoriteResource,
};
