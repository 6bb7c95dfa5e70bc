import { checkFilter, CompiledFilters, compileFilter } from '../../src/delivery/endpoints/endpoint-filter';
import type { EndpointFilter } from '../../src/generated/schemas';

const matches = (filter: EndpointFilter, body: Record<string, unknown>) => compileFilter(filter)(body);

describe('endpoint filter', () => {
  it('compares dates and timestamps as instants, whatever their zone or form', () => {
    const before = { path: 'at', lt: '2026-01-01T00:00:00Z' };
    expect(matches(before, { at: '2026-01-01T00:30:00+01:00' })).toBe(true);
    expect(matches(before, { at: '2026-01-01T00:30:00-01:00' })).toBe(false);
    expect(matches(before, { at: '2025-12-31T23:59:59.999Z' })).toBe(true);
    expect(matches(before, { at: '2025-12-31T23:59:59Z' })).toBe(true);
    expect(matches(before, { at: '2025-12-31' })).toBe(true);
    expect(matches(before, { at: '2026-01-01' })).toBe(false);
    expect(matches({ path: 'at', gte: '2026-01-01' }, { at: '2026-01-01T00:00:00.000Z' })).toBe(true);
    expect(matches({ path: 'at', lte: '2026-01-01T01:00:00+01:00' }, { at: '2026-01-01T00:00:00.000Z' })).toBe(true);
  });

  it('matches no comparison of a field of another kind, and no field that is missing', () => {
    expect(matches({ path: 'at', lt: '2026-01-01' }, { at: 'soon' })).toBe(false);
    expect(matches({ path: 'at', lt: '2026-01-01' }, { at: 20251231 })).toBe(false);
    expect(matches({ path: 'n', gt: 1 }, { n: '2' })).toBe(false);
    expect(matches({ path: 'n', gt: 1 }, {})).toBe(false);
    expect(matches({ path: 'a.b.c', eq: 1 }, { a: 'text' })).toBe(false);
    expect(matches({ path: 'a.b', ne: 1 }, {})).toBe(true);
    expect(matches({ path: 'a', nin: [1] }, {})).toBe(true);
    expect(matches({ path: 'a', exists: false }, { a: null })).toBe(true);
    expect(matches({ path: 'data.constructor', exists: true }, { data: {} })).toBe(false);
    expect(matches({ path: '__proto__', exists: true }, {})).toBe(false);
    expect(matches({ path: 'list.1', eq: 'b' }, { list: ['a', 'b'] })).toBe(true);
  });

  it('compiles a filter once per endpoint version', () => {
    const filters = new CompiledFilters();
    const first = filters.of('e1', '2026-12-07T10:00:00Z', { path: 'a', eq: 1 });
    expect(filters.of('e1', '2026-12-07T10:00:00Z', { path: 'a', eq: 2 })).toBe(first);
    const changed = filters.of('e1', '2026-12-07T10:05:00Z', { path: 'a', eq: 2 });
    expect(changed).not.toBe(first);
    expect(changed({ a: 2 })).toBe(true);
  });

  it('names the field at fault in what the schema cannot check', () => {
    expect(() => checkFilter({ and: [{ path: 'a', eq: 1 }, { path: 'b', gt: 'tomorrow' }] })).toThrow(expect.objectContaining({ details: { field: 'filter.and[1].gt', reason: expect.any(String) } }));
    expect(() => checkFilter({ path: 'a', eq: 1, in: [1] })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: 'filter' }) }));
  });
});
