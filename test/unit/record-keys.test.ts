import { recordKeyOf } from '../../src/events/record-keys';
import { EVENT_REGISTRY } from '../../src/events/registry';
import { loadSchemaFiles } from '../../src/schemas/schema-files';

const examples = new Map(loadSchemaFiles().map((f) => [f.id, ((f.schema.examples as Record<string, unknown>[] | undefined) ?? [])[0]]));
/** An event's data as recordEvent gets it: each shape's schema example (none for a shape B delivered in shape A). */
const payloadOf = (key: string) => {
  const definition = EVENT_REGISTRY.find((e) => e.key === key)!;
  return {
    a: definition.shapeA ? (examples.get(`events/a/${definition.shapeA}.json`) ?? null) : null,
    b: definition.shapeB && !definition.deliveredInShapeA ? (examples.get(`events/b/${definition.shapeB}.json`) ?? null) : null,
  };
};

describe('record keys (ordering per record)', () => {
  it.each(EVENT_REGISTRY.filter((e) => e.key !== 'timesheets.processed.batch').map((e) => [e.key]))('%s names its record', (key) => {
    const { a, b } = payloadOf(key);
    expect(recordKeyOf(key, a, b)).toMatch(/^[a-z_]+:[^:]+$/);
  });

  it('a batch of timesheets names none: each timesheet has its own timesheet.processed', () => {
    const { a, b } = payloadOf('timesheets.processed.batch');
    expect(recordKeyOf('timesheets.processed.batch', a, b)).toBeNull();
  });

  it('says which record the events that are not about their own id are about', () => {
    const id = '0b3f8a52-7d0e-4c55-9f0a-2f4a3e9b1c11';
    expect(recordKeyOf('employee.assigned', null, { employee: { id, emp_number: 'E-1', name: 'Dev' } })).toBe(`employee:${id}`);
    expect(recordKeyOf('timesheet.updated', { timesheet_id: id, update_type: 'entry_added' }, { id })).toBe(`timesheet:${id}`);
    expect(recordKeyOf('report.generated', null, { schedule_id: id, run_id: 'r-1' })).toBe(`report_schedule:${id}`);
    expect(recordKeyOf('report.daily_submitted', { report_id: id, work_order_id: 'w-1' }, null)).toBe(`report:${id}`);
    // Both shapes of a work order's events share one key.
    expect(recordKeyOf('workorder.started', null, { id })).toBe(recordKeyOf('work_order.updated', { id }, { id }));
    expect(recordKeyOf('po.attachment.added', null, { id, attachment: { id: 'a-1' } })).toBe(`po:${id}`);
  });
});
