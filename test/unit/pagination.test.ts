import { ApiError } from '../../src/errors';
import { parsePage } from '../../src/api/pagination';

describe('pagination parameters', () => {
  it('defaults to limit 50, offset 0', () => {
    expect(parsePage({})).toEqual({ limit: 50, offset: 0 });
  });

  it('accepts limit 1 to 100 and any non-negative offset', () => {
    expect(parsePage({ limit: '1', offset: '0' })).toEqual({ limit: 1, offset: 0 });
    expect(parsePage({ limit: '100', offset: '250' })).toEqual({ limit: 100, offset: 250 });
  });

  it.each([
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: '-1' }, 'limit'],
    [{ limit: '10.5' }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ limit: '' }, 'limit'],
    [{ limit: ['10', '20'] }, 'limit'],
    [{ offset: '-5' }, 'offset'],
    [{ offset: 'abc' }, 'offset'],
  ])('rejects %j with a 400 naming %s', (query, field) => {
    let error: unknown;
    try {
      parsePage(query);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).details.field).toBe(field);
  });
});
