import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ApiError } from '../errors';
import { SCHEMAS_DIR } from '../paths';
import { isUuid, isValidDate, isValidTimestamp } from './formats';
import { loadSchemaFiles } from './schema-files';

const FORMAT_REASONS: Record<string, string> = {
  date: 'must be a calendar date (YYYY-MM-DD) from year 0001 to 9999',
  'date-time': 'must be an ISO 8601 timestamp with a time zone from year 0001 to 9999, e.g. 2026-03-01T08:00:00Z',
  time: 'must be a time (HH:MM)',
  email: 'must be an e-mail address',
  uri: 'must be an absolute URL',
  uuid: 'must be a UUID (8-4-4-4-12 hexadecimal digits)',
};

/** Patterns of schemas/common/definitions.json, said in words. */
const PATTERN_REASONS: Record<string, string> = {
  '\\S': 'must not be blank',
  '^([01][0-9]|2[0-3]):[0-5][0-9]$': 'must be a time (HH:MM, 24-hour)',
  "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$": "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)",
  '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$': 'must be printable ASCII without line breaks or leading and trailing spaces',
  '^[A-Za-z_][A-Za-z0-9_]*(\\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*$': 'must be a dotted path of field names and array indexes, e.g. data.project.project_code',
};

/** `/data/contacts/0/email` + `first_name` → `data.contacts[0].email.first_name` style dotted paths. */
function fieldOf(error: ErrorObject, prefix: string): string {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const extra =
    error.keyword === 'required'
      ? (error.params as { missingProperty: string }).missingProperty
      : error.keyword === 'additionalProperties'
        ? (error.params as { additionalProperty: string }).additionalProperty
        : error.keyword === 'unevaluatedProperties'
          ? (error.params as { unevaluatedProperty: string }).unevaluatedProperty
          : undefined;
  if (extra !== undefined) segments.push(extra);
  const joined = segments.reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : acc ? `${acc}.${s}` : s), '');
  return prefix && joined ? `${prefix}.${joined}` : prefix || joined;
}

function reasonOf(error: ErrorObject, all: ErrorObject[]): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'required but not provided';
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'is not a recognised field';
    case 'anyOf':
    case 'oneOf': {
      // The alternatives' own errors come first; their expected types say what would have been accepted.
      const types = all.filter((e) => e.keyword === 'type' && e.instancePath === error.instancePath).map((e) => String(e.params.type));
      return types.length ? `must be of type ${[...new Set(types)].join(' or ')}` : 'does not match any accepted form';
    }
    case 'pattern':
      return PATTERN_REASONS[params.pattern as string] ?? `must match the pattern ${String(params.pattern)}`;
    case 'minimum':
    case 'exclusiveMinimum':
      return `must be ${error.keyword === 'minimum' ? 'at least' : 'more than'} ${String(params.limit)}`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `must be ${error.keyword === 'maximum' ? 'at most' : 'less than'} ${String(params.limit)}`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} item(s)`;
    case 'maxProperties':
      return `must have at most ${String(params.limit)} field(s)`;
    case 'uniqueItems':
      return 'must not contain duplicates';
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
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(schemasDir: string = SCHEMAS_DIR) {
    // JSON Schema 2020-12, the dialect of OpenAPI 3.1. Bodies compose shared field lists with allOf, where
    // `required` names properties of the composed parts; strictRequired cannot see those, so it is off.
    this.ajv = new Ajv2020({ allErrors: false, strict: true, strictRequired: false, allowUnionTypes: true, useDefaults: true, coerceTypes: false });
    addFormats(this.ajv, ['email', 'uri']);
    this.ajv.addFormat('date', isValidDate);
    this.ajv.addFormat('date-time', isValidTimestamp);
    this.ajv.addFormat('uuid', isUuid);
    for (const { schema } of loadSchemaFiles(schemasDir)) this.ajv.addSchema(schema);
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
    const errors = validateFn.errors!;
    // An alternative's failure is reported through its anyOf/oneOf, which says what all alternatives accept.
    const error = errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf') ?? errors[0]!;
    const field = fieldOf(error, fieldPrefix);
    const reason = reasonOf(error, errors);
    if (!field) throw ApiError.invalid('body', reason, `Request body ${reason}`);
    const message = error.keyword === 'required' ? `Missing required field: ${field}` : `Invalid value for ${field}: ${reason}`;
    throw ApiError.invalid(field, reason, message);
  }
}
