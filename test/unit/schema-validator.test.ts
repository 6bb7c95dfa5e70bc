import { ApiError } from '../../src/errors';
import { SchemaValidator } from '../../src/schemas/schema-validator';

const validator = new SchemaValidator();

function errorOf(schema: string, value: unknown, prefix?: string): ApiError {
  try {
    validator.validate(schema, value, prefix);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('schema validation', () => {
  it('loads every schema under schemas/ by its path', () => {
    for (const id of ['rest/work-orders.json#/$defs/create', 'inbound/envelope.json', 'inbound/employee.json#/$defs/created', 'inbound/project.json#/$defs/created']) {
      expect(validator.has(id)).toBe(true);
    }
  });

  it('returns a valid value unchanged', () => {
    const body = { title: 'Framing', project_id: '0193f4a0-0000-7000-8000-000000000001', priority: 'high' };
    expect(validator.validate('rest/work-orders.json#/$defs/create', body)).toEqual(body);
  });

  it('names a missing required field the way the spec shows', () => {
    const error = errorOf('rest/work-orders.json#/$defs/create', { project_id: '0193f4a0-0000-7000-8000-000000000001' });
    expect(error.toBody()).toEqual({
      error: { code: 'INVALID_REQUEST', message: 'Missing required field: title', details: { field: 'title', reason: 'required but not provided' } },
    });
    expect(error.status).toBe(400);
  });

  it('prefixes fields with where the value sits and follows arrays', () => {
    const error = errorOf(
      'inbound/project.json#/$defs/created',
      { project_code: 'P-1', project_name: 'Tower', customer_name: 'Acme', location_name: 'Site', contacts: [{ first_name: 'A', last_name: 'B', email: 'nope' }] },
      'data',
    );
    expect(error.details).toEqual({ field: 'data.contacts[0].email', reason: 'must be an e-mail address' });
  });

  it.each([
    ['an unknown field', { title: 'x', project_id: '0193f4a0-0000-7000-8000-000000000001', colour: 'red' }, 'colour', 'is not a recognised field'],
    ['a value outside an enum', { title: 'x', project_id: '0193f4a0-0000-7000-8000-000000000001', priority: 'asap' }, 'priority', 'must be one of: low, normal, high, urgent'],
    ['a malformed timestamp', { title: 'x', project_id: '0193f4a0-0000-7000-8000-000000000001', scheduled_start: '2026-03-01 08:00' }, 'scheduled_start', expect.stringContaining('ISO 8601')],
    ['a wrong type', { title: 7, project_id: '0193f4a0-0000-7000-8000-000000000001' }, 'title', 'must be of type string'],
    ['an empty string', { title: '', project_id: '0193f4a0-0000-7000-8000-000000000001' }, 'title', 'must not be empty'],
  ])('rejects %s', (_, body, field, reason) => {
    expect(errorOf('rest/work-orders.json#/$defs/create', body).details).toEqual({ field, reason });
  });

  it('rejects a body that is not an object', () => {
    expect(errorOf('rest/work-orders.json#/$defs/create', ['x']).details).toEqual({ field: 'body', reason: 'must be of type object' });
  });

  it('checks dates as calendar dates', () => {
    const base = { emp_number: 'E1', name: 'N', email: 'n@example.com', employee_type: 'office' };
    expect(errorOf('inbound/employee.json#/$defs/created', { ...base, start_date: '2026-02-30' }, 'data').details.field).toBe('data.start_date');
    expect(validator.validate('inbound/employee.json#/$defs/created', { ...base, start_date: '2026-02-28' })).toBeTruthy();
  });
});
