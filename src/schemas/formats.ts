/**
 * The one place dates and timestamps are parsed. Everything accepted here is storable in PostgreSQL
 * (`date`, `timestamptz`) and survives a round trip through JavaScript's Date and toISOString: years 0001 to
 * 9999 (after applying the zone offset), real calendar days, no leap second (`23:59:60`), zone offsets within
 * ±23:59. Registered as the ajv formats `date` and `date-time`, and used for query parameters.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The earliest and latest instants accepted: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z. */
const MIN_TIME = new Date(Date.UTC(2000, 0, 1)).setUTCFullYear(1, 0, 1);
const MAX_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function isCalendarDay(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

/** A `YYYY-MM-DD` calendar date from year 0001 to 9999. */
export function isValidDate(text: string): boolean {
  const match = DATE.exec(text);
  return match !== null && isCalendarDay(Number(match[1]), Number(match[2]), Number(match[3]));
}

/** The instant an RFC 3339 timestamp names, or null when it is malformed or out of range. */
export function parseTimestamp(text: string): Date | null {
  const match = DATE_TIME.exec(text);
  if (!match) return null;
  const [, year, month, day, hour, minute, second, , zone, , offsetHours, offsetMinutes] = match;
  if (!isCalendarDay(Number(year), Number(month), Number(day))) return null;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  if (zone!.toUpperCase() !== 'Z' && (Number(offsetHours) > 23 || Number(offsetMinutes) > 59)) return null;
  const time = Date.parse(text.toUpperCase());
  if (Number.isNaN(time) || time < MIN_TIME || time > MAX_TIME) return null;
  return new Date(time);
}

export const isValidTimestamp = (text: string): boolean => parseTimestamp(text) !== null;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its canonical 8-4-4-4-12 form: no `urn:uuid:` prefix, no braces, nothing PostgreSQL would reinterpret. */
export const isUuid = (text: string): boolean => UUID.test(text);
