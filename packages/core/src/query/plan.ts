/** The validated plans storage runs (defined in sql/, where they are consumed). */
export type { Condition, FieldCondition, SortPlan, Boundary, ExpandNode, ListPlan } from '../sql/plan';
