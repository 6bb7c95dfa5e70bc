import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../errors';
import { SCHEMAS_DIR } from '../paths';

const FORMAT_REASONS: Record<string, string> = {
  date: 'must be a date (YYYY-MM-DD)',
  'date-time': 'must be an ISO 8601 timestamp with a time zone, e.g. 2026-03-01T08:00:00Z',
  time: 'must be a time (HH:MM)',
  email: 'must be an e-mail address',
  uri: 'must be an absolute URL',
  uuid: 'must be a UUID',
};

function listSchemaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listSchemaFiles(path.join(dir, entry.name)) : entry.name.endsWith('.json') ? [path.join(dir, entry.name)] : [],
  );
}

/** `/data/contacts/0/email` + `first_name` → `data.contacts[0].email.first_name` style dotted paths. */
function fieldOf(error: ErrorObject, prefix: string): string {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const extra =
    error.keyword === 'required'
      ? (error.params as { missingProperty: string }).missingProperty
      : error.keyword === 'additionalProperties'
        ? (error.params as { additionalProperty: string }).additionalProperty
        : undefined;
  if (extra !== undefined) segments.push(extra);
  const joined = segments.reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : acc ? `${acc}.${s}` : s), '');
  return prefix && joined ? `${prefix}.${joined}` : prefix || joined;
}

function reasonOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'required but not provided';
    case 'additionalProperties':
      return 'is not a recognised field';
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'format':
      return FORMAT_REASONS[params.format as string] ?? `must match format ${String(params.format)}`;
    case 'type':
      return `must be ${params.type === 'integer' ? 'an integer' : `of type ${String(params.type)}`}`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters`;
    case 'minItems':
      return `must have at least ${String(params.limit)} item(s)`;
    case 'minProperties':
      return `must have at least ${String(params.limit)} field(s)`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** The ajv-based gate every request body passes: one compiled validator per schema file under schemas/. */
export class SchemaValidator {
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(schemasDir: string = SCHEMAS_DIR) {
    this.ajv = new Ajv({ allErrors: false, strict: true, useDefaults: true, coerceTypes: false });
    addFormats(this.ajv);
    for (const file of listSchemaFiles(schemasDir)) {
      const schema = JSON.parse(readFileSync(file, 'utf8')) as { $id?: string };
      const expectedId = path.relative(schemasDir, file).split(path.sep).join('/');
      if (schema.$id !== expectedId) throw new Error(`${file}: $id must be "${expectedId}"`);
      this.ajv.addSchema(schema);
    }
  }

  has(schemaId: string): boolean {
    return this.ajv.getSchema(schemaId) !== undefined;
  }

  /**
   * Checks `value` against the schema and returns it typed, or throws a 400 naming the first field at fault.
   * `fieldPrefix` names where the value sits in the request (e.g. `data` for an inbound operation's data).
   */
  validate<T>(schemaId: string, value: unknown, fieldPrefix = ''): T {
    let validateFn = this.compiled.get(schemaId);
    if (!validateFn) {
      validateFn = this.ajv.getSchema(schemaId);
      if (!validateFn) throw new Error(`Unknown schema ${schemaId}`);
      this.compiled.set(schemaId, validateFn);
    }
    if (validateFn(value)) return value as T;
    const error = validateFn.errors![0]!;
    const field = fieldOf(error, fieldPrefix);
    const reason = reasonOf(error);
    if (!field) throw ApiError.invalid('body', reason, `Request body ${reason}`);
    const message = error.keyword === 'required' ? `Missing required field: ${field}` : `Invalid value for ${field}: ${reason}`;
    throw ApiError.invalid(field, reason, message);
  }
}
