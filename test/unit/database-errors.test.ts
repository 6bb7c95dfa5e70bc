import { isDatabaseUnavailable } from '../../src/db/database-errors';

describe('isDatabaseUnavailable (503 with Retry-After, not 500)', () => {
  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a shutdown', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    ['a start-up', Object.assign(new Error('the database system is starting up'), { code: '57P03' })],
    ['the next query of a transaction whose connection was lost', new Error('Transaction query already complete, run with DEBUG=knex:tx for more info')],
  ])('holds for %s', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' })],
    ['a protocol violation', Object.assign(new Error('invalid message format'), { code: '08P01' })],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ])('does not hold for %s', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
