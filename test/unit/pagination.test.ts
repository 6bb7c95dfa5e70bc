import { ApiError } from '../../src/errors';
import { parsePage } from '../../src/api/pagination';
import { decodeCursor, encodeCursor } from '../../src/domain/page';

const cursor = { list: 'customers.created_at.asc', keys: ['2026-03-01T08:00:00.000100Z', '01a20000-0000-7000-8000-000000000000'] };
const b64 = (text: string) => Buffer.from(text).toString('base64url');

describe('pagination parameters', () => {
  it('defaults to limit 50, offset 0', () => {
    expect(parsePage({})).toEqual({ limit: 50, offset: 0 });
  });

  it('takes a cursor as after, with offset left out or 0', () => {
    expect(parsePage({ after: encodeCursor(cursor) })).toEqual({ limit: 50, offset: 0, after: cursor });
    expect(parsePage({ after: encodeCursor(cursor), offset: '0', limit: '5' })).toEqual({ limit: 5, offset: 0, after: cursor });
  });

  it('reads back exactly the cursors it makes, and nothing else', () => {
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    expect(decodeCursor(encodeCursor({ list: 'schedule', keys: ['2026-05-04', '', 'WO-1', cursor.keys[1]!] }))).toEqual({ list: 'schedule', keys: ['2026-05-04', '', 'WO-1', cursor.keys[1]] });
    for (const text of ['', '{}', 'e30', b64('null'), b64('[]'), b64('{"l":"","k":["a"]}'), b64('{"l":"x","k":[]}'), b64('{"l":"x","k":[1]}'), b64('{"l":"x","k":["a"],"z":0}'), b64(`{"l":"x","k":["${'a'.repeat(501)}"]}`)]) {
      expect({ text, cursor: decodeCursor(text) }).toEqual({ text, cursor: null });
    }
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
    [{ after: '' }, 'after'],
    [{ after: 'a+b/c=' }, 'after'],
    [{ after: b64('{"l":"x"}') }, 'after'],
    [{ after: `${encodeCursor(cursor)}A` }, 'after'],
    [{ after: encodeCursor(cursor), offset: '1' }, 'offset'],
    [{ after: [encodeCursor(cursor), encodeCursor(cursor)] }, 'after'],
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
