/**
 * What spans may say of a query: its shape, never its values (filters and bodies may hold personal data, keys or
 * secrets).
 */

// A string literal as PostgreSQL reads it: E'…' with backslash escapes, or '…' where '' is a quote.
const STRING_LITERAL = /\bE'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'/gi;
// Not a bind parameter's number (`$1`): that says nothing of a value.
const NUMBER_LITERAL = /(?<!\$)\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/gi;

/**
 * A SQL statement with its string and number literals replaced by `?`. MikroORM sends values inlined in the text
 * rather than as bind parameters, so the statement as sent would carry them.
 */
export function statementWithoutLiterals(sql: string): string {
  return sql.replace(STRING_LITERAL, '?').replace(NUMBER_LITERAL, '?');
}
