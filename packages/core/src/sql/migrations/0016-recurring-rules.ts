import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { recurringRuleResource } from '../../resources/recurring-rule.resource';
import { createTable, tableOf } from './table';

/** Recurring rules: the table from the declaration; the job finds due rules by next_run_at. Indexes serve every lookup by a reference. */
export function recurringRules(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, recurringRuleResource.table, tableOf(recurringRuleResource)).execute();
      await db.schema.createIndex('recurring_rules_due').on('recurring_rules').columns(['next_run_at', 'id']).execute();
      await db.schema.createIndex('recurring_rules_project_created').on('recurring_rules').columns(['project_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('recurring_rules_team_updated').on('recurring_rules').columns(['team_id', 'updated_at', 'id']).execute();
      await db.schema.createIndex('tasks_recurring_rule').on('tasks').columns(['recurring_rule_id']).execute();
      // Deleting a rule clears the lists that name it; deleting a list or status clears the rules that name it.
      await db.schema.createIndex('lists_recurring_rule').on('lists').columns(['recurring_rule_id']).execute();
      await db.schema.createIndex('recurring_rules_list').on('recurring_rules').columns(['list_id']).execute();
      await db.schema.createIndex('recurring_rules_status').on('recurring_rules').columns(['status_id']).execute();
    },
  };
}
