/**
 * Scopes an API key can hold. `<collection>:read` and `<collection>:write` guard the REST collections,
 * `timesheets:approve` and `timesheets:process` the manager's and payroll's timesheet actions, `reports:approve`
 * and `purchase-orders:approve` decisions on reports and purchase orders,
 * `webhooks:inbound` the inbound endpoint, `webhooks:manage` webhook endpoints and deliveries; `admin`
 * grants everything.
 */
export const REST_COLLECTIONS = [
  'employees',
  'contacts',
  'projects',
  'work-orders',
  'schedules',
  'timesheets',
  'time-off',
  'vendors',
  'vendor-locations',
  'purchase-orders',
  'customers',
  'locations',
  'daily-reports',
  'completion-reports',
  'skills',
  'work-types',
  'approval-thresholds',
  'report-schedules',
  'report-runs',
] as const;

export type RestCollection = (typeof REST_COLLECTIONS)[number];

export const ADMIN_SCOPE = 'admin';
export const INBOUND_SCOPE = 'webhooks:inbound';
export const WEBHOOKS_MANAGE_SCOPE = 'webhooks:manage';
/** A manager's timesheet actions: lock a submitted timesheet, unlock a locked one. */
export const TIMESHEETS_APPROVE_SCOPE = 'timesheets:approve';
/** Payroll's: process a locked timesheet, run a period's payroll batch. */
export const TIMESHEETS_PROCESS_SCOPE = 'timesheets:process';
/** A manager's decision on a daily or completion report: approve or reject it. */
export const REPORTS_APPROVE_SCOPE = 'reports:approve';
/** An approver's decision on a purchase order: approve or reject it. */
export const PURCHASE_ORDERS_APPROVE_SCOPE = 'purchase-orders:approve';

export const ALL_SCOPES: readonly string[] = [
  ...REST_COLLECTIONS.flatMap((c) => [`${c}:read`, `${c}:write`]),
  TIMESHEETS_APPROVE_SCOPE,
  TIMESHEETS_PROCESS_SCOPE,
  REPORTS_APPROVE_SCOPE,
  PURCHASE_ORDERS_APPROVE_SCOPE,
  INBOUND_SCOPE,
  WEBHOOKS_MANAGE_SCOPE,
  ADMIN_SCOPE,
];

export const readScope = (collection: RestCollection) => `${collection}:read`;
export const writeScope = (collection: RestCollection) => `${collection}:write`;

export function grants(held: readonly string[], needed: string): boolean {
  return held.includes(ADMIN_SCOPE) || held.includes(needed);
}

export function unknownScopes(scopes: readonly string[]): string[] {
  return scopes.filter((s) => !ALL_SCOPES.includes(s));
}
