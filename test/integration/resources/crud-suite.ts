import { RESOURCES } from '../../../src/api/resources';
import { REST_COLLECTIONS, type RestCollection } from '../../../src/domain/accounts/scopes';
import type { ResourceDefinition } from '../../../src/api/resources/resource';
import { schemaViolation } from '../../helpers/event-contract';
import { countRows } from '../../helpers/fixtures';
import { type RestClient, restClient, unique, unknownId, walkByCursor } from '../../helpers/api-client';
import { createTenant, issueTestKey, request, type Tenant, type TestStack } from '../../helpers/stack';

/** Ids of the records a collection's records point at (customers, vendors, an employee …), by name. */
export type Parents = Record<string, string>;

/** What the shared suite needs to know about one REST collection. */
export interface CrudFixture {
  collection: RestCollection;
  /** Its table, to count rows. */
  table: string;
  /** The wire fields of its natural key (unique case-insensitively); a 409 names the first. */
  keyFields: string[];
  /** False when an update cannot change the key (a timesheet's day): such an update is a 400 naming the field. */
  keyUpdatable?: boolean;
  /** Creates, in a new company, the records its records need. */
  parents(context: { stack: TestStack; tenant: Tenant; api: RestClient }): Promise<Parents>;
  /**
   * A valid create body, a different record for each tag, whose fields come back as sent (no normalisation)
   * and which sets `update.clear` and `textField`.
   */
  body(parents: Parents, tag: string): Record<string, unknown>;
  /** The records the list, paging and filter tests create, in this order. */
  listRecords(parents: Parents): Record<string, unknown>[];
  /**
   * Filter cases: the query string, and the indexes of the records it must return, in order: into the records
   * every new company has (work types' built-ins), then listRecords.
   */
  filters: { query(parents: Parents, created: any[]): string; expect: number[] }[];
  update: {
    /** A partial update whose fields come back as sent. */
    patch: Record<string, unknown>;
    /** An optional field that null clears. */
    clear: string;
  };
  /** A top-level text field with no normalisation, and its maxLength (200 unless given). */
  textField: string;
  textMaxLength?: number;
  /** Bodies that must be a 400 naming `field`, with nothing written. */
  invalid: { what: string; on: 'create' | 'update'; body(parents: Parents): Record<string, unknown>; field: string }[];
}

const definitionOf = (collection: string): ResourceDefinition => {
  const definition = RESOURCES.find((r) => r.collection === collection);
  if (!definition) throw new Error(`no resource definition for ${collection}`);
  return definition;
};

const ids = (records: { id: string }[]) => records.map((r) => r.id);
const paramsOf = (query: string) => [...new URLSearchParams(query).keys()];
const swapCase = (text: string) => [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');

/** A filter query for a test name: parent ids as <name>, other ids as <unknown id>. */
function titleOf(query: CrudFixture['filters'][number]['query']): string {
  const named = new Proxy({}, { get: (_, name) => `<${String(name)}>` }) as Parents;
  return decodeURIComponent(query(named, [])).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<unknown id>');
}

/** A value a declared filter refuses, judged from its documented schema. */
function refusedValueOf(schema: Record<string, unknown>): string {
  if (schema.format === 'uuid') return 'not-a-uuid';
  if (schema.type === 'boolean') return 'yes';
  if (Array.isArray(schema.enum)) return 'no-such-value';
  return 'x'.repeat(201);
}

/**
 * Defines the tests every REST collection must pass: list, paging, filters, updated_since, get, create,
 * partial update, delete, 404, 403, 400 and 409 (rest-api.md 4, 7; issue 6 sections 1 to 3).
 */
export function crudSuite(fixture: CrudFixture, getStack: () => TestStack): void {
  const { collection } = fixture;
  const base = `/${collection}`;
  const recordSchema = `rest/${collection}.json#/$defs/record`;
  const definition = definitionOf(collection);

  /** A new company with its parent records and a REST client. */
  async function company() {
    const stack = getStack();
    const tenant = await createTenant(stack.orm, ['admin']);
    const api = restClient(stack, tenant);
    const parents = await fixture.parents({ stack, tenant, api });
    return { stack, tenant, api, parents };
  }

  describe(`${collection}: list, paging and filters`, () => {
    let api: RestClient;
    let parents: Parents;
    let created: any[];

    beforeAll(async () => {
      ({ api, parents } = await company());
      // What every new company has (built-in work types) comes first.
      created = (await api.get(`${base}?limit=100`)).body.data;
      for (const body of fixture.listRecords(parents)) created.push(await api.create(collection, body));
    });

    it('lists every record, oldest first, each as GET shows it, with limit, offset and total', async () => {
      const response = await api.get(base);
      expect(response.status).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual(['data', 'pagination']);
      expect(response.body.pagination).toEqual({ limit: 50, offset: 0, total: created.length, next_cursor: null });
      expect(response.body.data).toEqual(created);
      for (const record of response.body.data) expect(schemaViolation(recordSchema, record)).toBeNull();
    });

    it('pages with limit and offset, keeping the total', async () => {
      const first = await api.get(`${base}?limit=2`);
      expect(first.body.pagination).toEqual({ limit: 2, offset: 0, total: created.length, next_cursor: expect.any(String) });
      expect(ids(first.body.data)).toEqual(ids(created.slice(0, 2)));
      const second = await api.get(`${base}?limit=2&offset=2`);
      expect(second.body.pagination).toEqual({ limit: 2, offset: 2, total: created.length, next_cursor: created.length > 4 ? expect.any(String) : null });
      expect(ids(second.body.data)).toEqual(ids(created.slice(2, 4)));
      const last = await api.get(`${base}?limit=1&offset=${created.length - 1}`);
      expect(ids(last.body.data)).toEqual([created.at(-1).id]);
    });

    it('answers an empty page with the real total for an offset past the end', async () => {
      const response = await api.get(`${base}?offset=${created.length + 5}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: [], pagination: { limit: 50, offset: created.length + 5, total: created.length, next_cursor: null } });
    });

    it('walks by cursor: every record once, in the order offset paging gives, the total kept, no next_cursor on the last page', async () => {
      const { pages, records } = await walkByCursor(api, `${base}?limit=2`);
      expect(records).toEqual(created);
      expect(pages).toHaveLength(Math.ceil(created.length / 2));
      for (const [n, page] of pages.entries()) {
        expect(page.pagination).toEqual({ limit: 2, offset: 0, total: created.length, next_cursor: n === pages.length - 1 ? null : expect.any(String) });
      }
    });

    it.each(['limit=0', 'limit=101', 'offset=-1'])('answers 400 naming the parameter to %s', async (query) => {
      const response = await api.get(`${base}?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: query.split('=')[0] } });
    });

    it('answers 400 naming an unknown query parameter', async () => {
      const response = await api.get(`${base}?colour=blue`);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'colour' } });
    });

    it('has a test case for every filter the definition declares', () => {
      const declared = (definition.filters ?? []).map((f) => f.param.name).sort();
      const tested = [...new Set(fixture.filters.flatMap((f) => paramsOf(f.query(parents, created))))].sort();
      expect(tested).toEqual(declared);
    });

    it.each(fixture.filters.map((f) => [titleOf(f.query), f] as const))('?%s returns exactly the matching records', async (_, filter) => {
      const query = filter.query(parents, created);
      const response = await api.get(`${base}?${query}`);
      expect({ query, status: response.status }).toEqual({ query, status: 200 });
      expect({ query, ids: ids(response.body.data) }).toEqual({ query, ids: filter.expect.map((i) => created[i].id) });
      expect(response.body.pagination.total).toBe(filter.expect.length);
      // A filter that keeps everything proves nothing.
      expect(filter.expect.length).toBeLessThan(created.length);
      // By cursor, a record a page, the same records with the same total.
      const { pages, records } = await walkByCursor(api, `${base}?${query}&limit=1`);
      expect({ query, ids: ids(records) }).toEqual({ query, ids: filter.expect.map((i) => created[i].id) });
      expect(pages.every((page) => page.pagination.total === filter.expect.length)).toBe(true);
      // Past the last page the total is counted on its own, with the same conditions.
      const past = await api.get(`${base}?${query}&offset=${created.length}`);
      expect({ query, status: past.status, data: past.body.data, total: past.body.pagination?.total }).toEqual({ query, status: 200, data: [], total: filter.expect.length });
    });

    it.each((definition.filters ?? []).map((f) => [f.param.name, f.param.schema] as const))(
      'answers 400 naming the %s filter when its value is malformed',
      async (name, schema) => {
        const response = await api.get(`${base}?${name}=${encodeURIComponent(refusedValueOf(schema))}`);
        expect(response.status).toBe(400);
        expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: name } });
      },
    );

    const textFilter = (definition.filters ?? []).find((f) => f.param.schema.type === 'string' && !f.param.schema.format);
    // Collections filtered by ids, values and dates only (time off) have no free text to test.
    if (textFilter) {
      it('answers 400 naming a text filter that holds a NUL character, never 500', async () => {
        const response = await api.get(`${base}?${textFilter.param.name}=a%00b`);
        expect(response.status).toBe(400);
        expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: textFilter.param.name } });
      });
    }
  });

  describe(`${collection}: updated_since`, () => {
    it('excludes records last changed before the instant, and an update brings one back', async () => {
      const { api, parents } = await company();
      const records: any[] = [];
      for (const tag of ['one', 'two', 'three']) records.push(await api.create(collection, fixture.body(parents, `${tag}-${unique()}`)));
      const [first, second, third] = records;

      const since = await api.get(`${base}?updated_since=${encodeURIComponent(second.updated_at)}`);
      expect(since.status).toBe(200);
      expect(ids(since.body.data)).toEqual([second.id, third.id]);
      expect(since.body.pagination.total).toBe(2);

      const later = new Date(Date.parse(third.updated_at) + 1).toISOString();
      expect((await api.get(`${base}?updated_since=${encodeURIComponent(later)}`)).body.data).toEqual([]);

      const updated = await api.put(`${base}/${first.id}`, fixture.update.patch);
      expect(updated.status).toBe(200);
      const after = await api.get(`${base}?updated_since=${encodeURIComponent(later)}`);
      expect(ids(after.body.data)).toEqual([first.id]);
      expect(after.body.data[0]).toEqual(updated.body);
      // Offsets in the parameter name the same instant.
      const shifted = new Date(Date.parse(updated.body.updated_at)).toISOString().replace('Z', '+00:00');
      expect(ids((await api.get(`${base}?updated_since=${encodeURIComponent(shifted)}`)).body.data)).toEqual([first.id]);
    });

    it.each(['2026-02-30T00:00:00Z', '0000-01-01T00:00:00Z', '2026-03-01', 'yesterday'])('answers 400 naming updated_since to %s', async (value) => {
      const { api } = await company();
      const response = await api.get(`${base}?updated_since=${encodeURIComponent(value)}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'updated_since' } });
    });
  });

  describe(`${collection}: get, create, update and delete`, () => {
    let stack: TestStack;
    let tenant: Tenant;
    let api: RestClient;
    let parents: Parents;

    beforeAll(async () => {
      ({ stack, tenant, api, parents } = await company());
    });

    it('creates with 201, a Location header naming the record, and the body GET then shows', async () => {
      const body = fixture.body(parents, unique());
      const response = await api.post(base, body);
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject(body);
      expect(response.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(schemaViolation(recordSchema, response.body)).toBeNull();
      expect(response.headers.get('location')).toBe(`/api/v1${base}/${response.body.id}`);

      const read = await request(stack.baseUrl, 'GET', response.headers.get('location')!, { key: tenant.key });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(response.body);
    });

    it('gets one record by id', async () => {
      const created = await api.create(collection, fixture.body(parents, unique()));
      const response = await api.get(`${base}/${created.id}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual(created);
      // Ids are case-insensitive UUIDs.
      expect((await api.get(`${base}/${created.id.toUpperCase()}`)).body).toEqual(created);
    });

    it('updates partially: only the given fields change and updated_at moves', async () => {
      const before = await api.create(collection, fixture.body(parents, unique()));
      const response = await api.put(`${base}/${before.id}`, fixture.update.patch);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ ...before, ...fixture.update.patch, updated_at: expect.any(String) });
      expect(Date.parse(response.body.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
      expect(response.body.created_at).toBe(before.created_at);
      expect((await api.get(`${base}/${before.id}`)).body).toEqual(response.body);
    });

    it(`clears an optional field (${fixture.update.clear}) given null, leaving the others`, async () => {
      const before = await api.create(collection, fixture.body(parents, unique()));
      expect(before[fixture.update.clear]).not.toBeNull();
      const response = await api.put(`${base}/${before.id}`, { [fixture.update.clear]: null });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ ...before, [fixture.update.clear]: null, updated_at: expect.any(String) });
      expect((await api.get(`${base}/${before.id}`)).body).toEqual(response.body);
    });

    it('deletes with 204; then GET and a second DELETE are 404 and the list no longer has it', async () => {
      const created = await api.create(collection, fixture.body(parents, unique()));
      const rows = await countRows(stack, fixture.table, tenant.companyId);
      const response = await api.delete(`${base}/${created.id}`);
      expect(response.status).toBe(204);
      expect(response.body).toBeUndefined();
      expect((await api.get(`${base}/${created.id}`)).status).toBe(404);
      const again = await api.delete(`${base}/${created.id}`);
      expect(again.status).toBe(404);
      expect(again.body.error).toMatchObject({ code: 'NOT_FOUND', details: { field: 'id' } });
      expect(ids((await api.get(`${base}?limit=100`)).body.data)).not.toContain(created.id);
      expect(await countRows(stack, fixture.table, tenant.companyId)).toBe(rows - 1);
    });

    describe('404', () => {
      it.each(['GET', 'PUT', 'DELETE'])('answers 404 in the error shape to %s of an id no record has', async (method) => {
        const path = `${base}/${unknownId()}`;
        const response = method === 'GET' ? await api.get(path) : method === 'PUT' ? await api.put(path, fixture.update.patch) : await api.delete(path);
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), details: { field: 'id', reason: expect.any(String) } } });
      });

      it('answers 404 to a path id that is not a UUID', async () => {
        expect((await api.get(`${base}/not-a-uuid`)).status).toBe(404);
        expect((await api.put(`${base}/12345`, fixture.update.patch)).status).toBe(404);
        expect((await api.delete(`${base}/not-a-uuid`)).status).toBe(404);
      });

      it("answers 404 to GET, PUT and DELETE of another company's record, and leaves it as it was", async () => {
        const other = await company();
        const theirs = await other.api.create(collection, fixture.body(other.parents, unique()));
        expect((await api.get(`${base}/${theirs.id}`)).status).toBe(404);
        expect((await api.put(`${base}/${theirs.id}`, fixture.update.patch)).status).toBe(404);
        expect((await api.delete(`${base}/${theirs.id}`)).status).toBe(404);
        expect((await api.get(base)).body.data.map((r: any) => r.id)).not.toContain(theirs.id);
        expect((await other.api.get(`${base}/${theirs.id}`)).body).toEqual(theirs);
      });
    });

    describe('403', () => {
      let record: any;
      beforeAll(async () => {
        record = await api.create(collection, fixture.body(parents, unique()));
      });

      const forbidden = (response: { status: number; body: any }, scope: string) => {
        expect(response.status).toBe(403);
        expect(response.body.error).toMatchObject({ code: 'FORBIDDEN', details: { field: 'X-API-Key', reason: `missing scope ${scope}` } });
      };

      it(`answers 403 to POST, PUT and DELETE with only ${collection}:read, and writes nothing`, async () => {
        const reader = restClient(stack, tenant, { scopes: [`${collection}:read`] });
        expect((await reader.get(`${base}/${record.id}`)).status).toBe(200);
        expect((await reader.get(base)).status).toBe(200);
        forbidden(await reader.post(base, fixture.body(parents, unique())), `${collection}:write`);
        forbidden(await reader.put(`${base}/${record.id}`, fixture.update.patch), `${collection}:write`);
        forbidden(await reader.delete(`${base}/${record.id}`), `${collection}:write`);
        expect((await api.get(`${base}/${record.id}`)).body).toEqual(record);
      });

      it(`answers 403 to GET of the list and of one record with only ${collection}:write`, async () => {
        const writer = restClient(stack, tenant, { scopes: [`${collection}:write`] });
        forbidden(await writer.get(base), `${collection}:read`);
        forbidden(await writer.get(`${base}/${record.id}`), `${collection}:read`);
      });

      it("answers 403 to every method with another collection's scopes", async () => {
        const others = REST_COLLECTIONS.filter((c) => c !== collection).slice(0, 2);
        const outsider = await issueTestKey(stack.orm, tenant.companyId, others.flatMap((c) => [`${c}:read`, `${c}:write`]));
        const call = (method: string, path: string, body?: unknown) => request(stack.baseUrl, method, `/api/v1${path}`, { key: outsider.key, body });
        forbidden(await call('GET', base), `${collection}:read`);
        forbidden(await call('GET', `${base}/${record.id}`), `${collection}:read`);
        forbidden(await call('POST', base, fixture.body(parents, unique())), `${collection}:write`);
        forbidden(await call('PUT', `${base}/${record.id}`, fixture.update.patch), `${collection}:write`);
        forbidden(await call('DELETE', `${base}/${record.id}`), `${collection}:write`);
      });
    });

    describe('400', () => {
      let existing: any;
      beforeAll(async () => {
        existing = await api.create(collection, fixture.body(parents, unique()));
      });

      type Case = { what: string; on: 'create' | 'update'; body: () => unknown; field: string };
      const text = fixture.textField;
      const tooLong = (fixture.textMaxLength ?? 200) + 1;
      const cases: Case[] = [
        { what: 'an unknown field', on: 'create', body: () => ({ ...fixture.body(parents, unique()), colour: 'blue' }), field: 'colour' },
        { what: 'an unknown field', on: 'update', body: () => ({ colour: 'blue' }), field: 'colour' },
        { what: `a number for ${text}`, on: 'create', body: () => ({ ...fixture.body(parents, unique()), [text]: 12345 }), field: text },
        { what: `a number for ${text}`, on: 'update', body: () => ({ [text]: 12345 }), field: text },
        { what: `${tooLong} characters of ${text}`, on: 'create', body: () => ({ ...fixture.body(parents, unique()), [text]: 'x'.repeat(tooLong) }), field: text },
        { what: `${tooLong} characters of ${text}`, on: 'update', body: () => ({ [text]: 'x'.repeat(tooLong) }), field: text },
        { what: `a NUL character in ${text}`, on: 'create', body: () => ({ ...fixture.body(parents, unique()), [text]: 'bad\u0000text' }), field: text },
        { what: `a NUL character in ${text}`, on: 'update', body: () => ({ [text]: 'bad\u0000text' }), field: text },
        { what: `half a UTF-16 surrogate pair in ${text}`, on: 'create', body: () => ({ ...fixture.body(parents, unique()), [text]: 'bad\ud800text' }), field: text },
        { what: 'an empty update', on: 'update', body: () => ({}), field: 'body' },
        { what: 'a body that is an array', on: 'create', body: () => [fixture.body(parents, unique())], field: 'body' },
        ...fixture.invalid.map((c) => ({ ...c, body: () => c.body(parents) })),
      ];

      it.each(cases.map((c) => [c.on === 'create' ? 'a create' : 'an update', c.what, c] as const))('answers 400 to %s with %s, naming the field and writing nothing', async (_on, _what, c) => {
        const rows = await countRows(stack, fixture.table, tenant.companyId);
        const response = c.on === 'create' ? await api.post(base, c.body()) : await api.put(`${base}/${existing.id}`, c.body());
        expect({ status: response.status, error: response.body?.error }).toEqual({
          status: 400,
          error: { code: 'INVALID_REQUEST', message: expect.any(String), details: { field: c.field, reason: expect.any(String) } },
        });
        expect(await countRows(stack, fixture.table, tenant.companyId)).toBe(rows);
        expect((await api.get(`${base}/${existing.id}`)).body).toEqual(existing);
      });
    });

    describe('409 on the natural key', () => {
      const keyOf = (body: Record<string, unknown>) => Object.fromEntries(fixture.keyFields.map((f) => [f, swapCase(String(body[f]))]));

      it(`answers 409 naming ${fixture.keyFields[0]} to a create whose ${fixture.keyFields.join(' and ')} differ only in case`, async () => {
        const first = fixture.body(parents, unique());
        await api.create(collection, first);
        const rows = await countRows(stack, fixture.table, tenant.companyId);
        const response = await api.post(base, { ...fixture.body(parents, unique()), ...keyOf(first) });
        expect(response.status).toBe(409);
        expect(response.body.error).toMatchObject({ code: 'CONFLICT', details: { field: fixture.keyFields[0] } });
        expect(await countRows(stack, fixture.table, tenant.companyId)).toBe(rows);
      });

      if (fixture.keyUpdatable === false) {
        it(`answers 400 naming ${fixture.keyFields[0]} to an update of the key, and leaves the record unchanged`, async () => {
          const created = await api.create(collection, fixture.body(parents, unique()));
          const response = await api.put(`${base}/${created.id}`, { [fixture.keyFields[0]!]: fixture.body(parents, unique())[fixture.keyFields[0]!] });
          expect(response.status).toBe(400);
          expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: fixture.keyFields[0] } });
          expect((await api.get(`${base}/${created.id}`)).body).toEqual(created);
        });
      } else {
        it('answers 409 to an update that gives a record the key of another, and leaves it unchanged', async () => {
          const first = fixture.body(parents, unique());
          await api.create(collection, first);
          const second = await api.create(collection, fixture.body(parents, unique()));
          const response = await api.put(`${base}/${second.id}`, keyOf(first));
          expect(response.status).toBe(409);
          expect(response.body.error).toMatchObject({ code: 'CONFLICT', details: { field: fixture.keyFields[0] } });
          expect((await api.get(`${base}/${second.id}`)).body).toEqual(second);
        });

        it('allows an update that only changes the case of its own key', async () => {
          const created = await api.create(collection, fixture.body(parents, unique()));
          const response = await api.put(`${base}/${created.id}`, keyOf(created));
          expect(response.status).toBe(200);
          expect(response.body).toMatchObject(keyOf(created));
        });
      }

      it('creates exactly one record when two creates of the same key arrive at once (201 and 409)', async () => {
        const body = fixture.body(parents, unique());
        const rows = await countRows(stack, fixture.table, tenant.companyId);
        const responses = await Promise.all([api.post(base, body), api.post(base, { ...body, ...keyOf(body) })]);
        expect(responses.map((r) => r.status).sort()).toEqual([201, 409]);
        const conflict = responses.find((r) => r.status === 409)!;
        expect(conflict.body.error).toMatchObject({ code: 'CONFLICT', details: { field: fixture.keyFields[0] } });
        expect(await countRows(stack, fixture.table, tenant.companyId)).toBe(rows + 1);
      });
    });
  });
}
