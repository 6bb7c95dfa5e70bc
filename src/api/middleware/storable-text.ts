import type { Middleware } from 'koa';
import { ApiError } from '../../errors';
import type { AppState } from '../context';

/** A NUL character, or half of a UTF-16 surrogate pair without its other half: text PostgreSQL cannot store. */
// eslint-disable-next-line no-control-regex -- the NUL character is what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const child = (path: string, key: string | number) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key);

function reasonOf(text: string): string {
  return text.includes('\u0000') ? 'must not contain NUL characters (\\u0000)' : 'must not contain unpaired UTF-16 surrogates';
}

/** Throws a 400 naming the first string (or object key) in `value` that cannot be stored, at its dotted path. */
export function assertStorableText(value: unknown, path: string): void {
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value)) throw ApiError.invalid(path || 'body', reasonOf(value));
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => assertStorableText(item, child(path, index)));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE.test(key)) throw ApiError.invalid(child(path, key), `is a field name that ${reasonOf(key)}`);
      assertStorableText(item, child(path, key));
    }
  }
}

/**
 * Every route at once: query parameters and JSON bodies holding text PostgreSQL cannot store are a 400
 * naming the field, before any handler or validator sees them.
 */
export function storableText(): Middleware<AppState> {
  return async (ctx, next) => {
    for (const [name, value] of Object.entries(ctx.query)) {
      if (UNSTORABLE.test(name)) throw ApiError.invalid('query', `has a parameter name that ${reasonOf(name)}`);
      assertStorableText(value, name);
    }
    await next();
  };
}
