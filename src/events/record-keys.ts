import { eventDefinition } from './registry';

type EventData = Record<string, unknown> | null | undefined;

const idIn = (value: unknown): string | null => (typeof value === 'string' || typeof value === 'number' ? String(value) : null);
const field = (data: EventData, name: string): unknown => (data ? data[name] : undefined);

/**
 * The record an event is about, as `<type>:<id>`: an endpoint with `ordering: per_record` gets one record's deliveries
 * one at a time, in the order their changes committed (docs/ordering.md). The type is the event's category (work_order
 * for workorder.* too, so both shapes' events of a work order share it) and the id the record's, from the event's data.
 * The exceptions say which record they change:
 * - report.daily_submitted, report.completion_*: the report (report_id); report.scheduled, .generated, .failed: the
 *   schedule (schedule_id), whose runs they are.
 * - employee.assigned: the employee assigned.
 * - timesheet.*: the timesheet (timesheet_id in shape A, whose entry updates carry no id of their own).
 * - endpoint.* (operational events): the endpoint; delivery.*: the delivery. Their database triggers
 *   (src/db/sql/functions/raise_*_operational_events.sql) name the same.
 * - timesheets.processed.batch: none. It is about many timesheets at once, each of which also gets its own
 *   timesheet.processed, which is ordered; the batch is ordered against nothing.
 */
export function recordKeyOf(eventType: string, data: EventData, catalogData: EventData): string | null {
  const { category } = eventDefinition(eventType);
  if (eventType === 'timesheets.processed.batch') return null;
  const id = (type: string, value: unknown) => {
    const recordId = idIn(value);
    return recordId === null ? null : `${type}:${recordId}`;
  };
  if (category === 'report') {
    const report = field(data, 'report_id') ?? field(catalogData, 'report_id');
    return report !== undefined ? id('report', report) : id('report_schedule', field(catalogData, 'schedule_id'));
  }
  if (eventType === 'employee.assigned') return id('employee', field(field(catalogData, 'employee') as EventData, 'id'));
  if (category === 'endpoint') return id('endpoint', field(field(data, 'endpoint') as EventData, 'id'));
  if (category === 'delivery') return id('delivery', field(data, 'delivery_id'));
  if (category === 'timesheet') return id('timesheet', field(data, 'timesheet_id') ?? field(catalogData, 'id') ?? field(data, 'id'));
  return id(category, field(data, 'id') ?? field(catalogData, 'id'));
}
