import { ApiError } from '../../errors';
import { isUuid, isValidDate } from '../../schemas/formats';
import type { JsonSchema } from '../../schemas/schema-files';
import type { QueryParam } from '../routes/route-spec';

/** A list filter: a query parameter and the condition its value puts on the entity's properties. */
export interface Filter {
  param: QueryParam;
  where(value: unknown): Record<string, unknown>;
}

function filter(name: string, description: string, schema: JsonSchema, parse: (raw: string) => unknown, where: (value: unknown) => Record<string, unknown>): Filter {
  return { param: { name, description, schema, parse }, where };
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `department.name` and a condition → `{ department: { name: condition } }`: a property of a related record. */
const at = (path: string, condition: unknown): Record<string, unknown> =>
  path
    .split('.')
    .reduceRight<unknown>((inner, property) => ({ [property]: inner }), condition) as Record<string, unknown>;

/** `?customer_id=<uuid>`: records of that related record (a malformed id is a 400). */
export const byId = (name: string, relation: string, description: string): Filter =>
  filter(
    name,
    description,
    { type: 'string', format: 'uuid' },
    (raw) => {
      if (!isUuid(raw)) throw ApiError.invalid(name, 'must be a UUID (8-4-4-4-12 hexadecimal digits)');
      return raw.toLowerCase();
    },
    (id) => ({ [relation]: id }),
  );

/** `?name=acme`: equal text, ignoring case (the way natural keys compare); `property` may be a related record's (`department.name`). */
export const byText = (name: string, property: string, description: string): Filter =>
  filter(name, description, { type: 'string', minLength: 1, maxLength: 200 }, parseText(name), (text) => at(property, { $ilike: escapeLike(text as string) }));

/** `?skill=welding`: records with at least one related record (`skills`) whose `property` is that text, ignoring case. */
export const bySomeText = (name: string, relation: string, property: string, description: string): Filter =>
  filter(name, description, { type: 'string', minLength: 1, maxLength: 200 }, parseText(name), (text) => ({
    // An exists test rather than a join: a record with several related records is listed once.
    [relation]: { $some: { [property]: { $ilike: escapeLike(text as string) } } },
  }));

function parseText(name: string) {
  return (raw: string) => {
    if (raw.length < 1 || raw.length > 200) throw ApiError.invalid(name, 'must be 1 to 200 characters');
    return raw;
  };
}

/** `?type=supplier`: one of a fixed set of values. */
export const byValue = (name: string, property: string, values: readonly string[], description: string): Filter =>
  filter(
    name,
    description,
    { enum: [...values] },
    (raw) => {
      if (!values.includes(raw)) throw ApiError.invalid(name, `must be one of: ${values.join(', ')}`);
      return raw;
    },
    (value) => ({ [property]: value }),
  );

/** `?is_primary=true`. */
export const byFlag = (name: string, property: string, description: string): Filter =>
  filter(
    name,
    description,
    { type: 'boolean' },
    (raw) => {
      if (raw !== 'true' && raw !== 'false') throw ApiError.invalid(name, 'must be true or false');
      return raw === 'true';
    },
    (value) => ({ [property]: value }),
  );

/** `?region=west`: records whose list property contains the value (exactly). */
export const byMember = (name: string, property: string, description: string): Filter =>
  filter(
    name,
    description,
    { type: 'string', minLength: 1, maxLength: 200 },
    (raw) => {
      if (raw.length < 1 || raw.length > 200) throw ApiError.invalid(name, 'must be 1 to 200 characters');
      return raw;
    },
    (value) => ({ [property]: { $contains: [value] } }),
  );

/** `?from=2026-05-01`: a calendar date (a malformed or impossible one is a 400). */
export const dateParam = (name: string, description: string): QueryParam => ({
  name,
  description,
  schema: { type: 'string', format: 'date' },
  parse(raw) {
    if (!isValidDate(raw)) throw ApiError.invalid(name, 'must be a calendar date (YYYY-MM-DD) from year 0001 to 9999');
    return raw;
  },
});

/** A date parameter and the condition a date puts on the records. */
export const byDate = (name: string, description: string, where: (date: string) => Record<string, unknown>): Filter => ({
  param: dateParam(name, description),
  where: (value) => where(value as string),
});
