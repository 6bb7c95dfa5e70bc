/**
 * Outbound event types by their shape A names (webhooks.md 6.1). Shape B (6.2) renames work_order.* to
 * workorder.* and purchase_order.* to po.*; every other name is the same in both shapes.
 */
export const EVENT_TYPES = [
  'work_order.created',
  'work_order.updated',
  'work_order.status_changed',
  'work_order.scheduled',
  'work_order.deleted',
  'project.created',
  'project.updated',
  'project.deleted',
  'project.closed',
  'report.daily_submitted',
  'report.completion_submitted',
  'report.completion_approved',
  'employee.created',
  'employee.updated',
  'employee.deleted',
  'vendor.created',
  'vendor.updated',
  'vendor.deleted',
  'time_off.created',
  'time_off.updated',
  'time_off.deleted',
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'location.created',
  'location.updated',
  'location.deleted',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'timesheet.created',
  'timesheet.updated',
  'timesheet.submitted',
  'timesheet.locked',
  'timesheet.unlocked',
  'timesheet.processed',
  'timesheets.processed.batch',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The shape B (catalog) name of an event. */
export function catalogEventName(eventType: EventType): string {
  return eventType.replace(/^work_order\./, 'workorder.').replace(/^purchase_order\./, 'po.');
}

/** The data of one event in both shapes; `catalogData` null means shape B subscribers get shape A. */
export interface EventPayload {
  data: Record<string, unknown>;
  catalogData: Record<string, unknown> | null;
}
