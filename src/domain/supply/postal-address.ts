import { ApiError } from '../../errors';

/** US states, DC and territories, and Canadian provinces and territories, by full name (lower case). */
const STATE_CODES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    AL: 'Alabama', AK: 'Alaska', AZ: 'Arizona', AR: 'Arkansas', CA: 'California', CO: 'Colorado', CT: 'Connecticut',
    DE: 'Delaware', DC: 'District of Columbia', FL: 'Florida', GA: 'Georgia', HI: 'Hawaii', ID: 'Idaho', IL: 'Illinois',
    IN: 'Indiana', IA: 'Iowa', KS: 'Kansas', KY: 'Kentucky', LA: 'Louisiana', ME: 'Maine', MD: 'Maryland',
    MA: 'Massachusetts', MI: 'Michigan', MN: 'Minnesota', MS: 'Mississippi', MO: 'Missouri', MT: 'Montana',
    NE: 'Nebraska', NV: 'Nevada', NH: 'New Hampshire', NJ: 'New Jersey', NM: 'New Mexico', NY: 'New York',
    NC: 'North Carolina', ND: 'North Dakota', OH: 'Ohio', OK: 'Oklahoma', OR: 'Oregon', PA: 'Pennsylvania',
    RI: 'Rhode Island', SC: 'South Carolina', SD: 'South Dakota', TN: 'Tennessee', TX: 'Texas', UT: 'Utah',
    VT: 'Vermont', VA: 'Virginia', WA: 'Washington', WV: 'West Virginia', WI: 'Wisconsin', WY: 'Wyoming',
    PR: 'Puerto Rico', GU: 'Guam', VI: 'U.S. Virgin Islands', AS: 'American Samoa', MP: 'Northern Mariana Islands',
    AB: 'Alberta', BC: 'British Columbia', MB: 'Manitoba', NB: 'New Brunswick', NL: 'Newfoundland and Labrador',
    NS: 'Nova Scotia', NT: 'Northwest Territories', NU: 'Nunavut', ON: 'Ontario', PE: 'Prince Edward Island',
    QC: 'Quebec', SK: 'Saskatchewan', YT: 'Yukon',
  }).map(([code, name]) => [name.toLowerCase(), code]),
);

const ZIP = /^(\d{5}(?:-\d{4})?|[A-Za-z]\d[A-Za-z] ?\d[A-Za-z]\d)$/;
const STATE_AND_ZIP = /^(.+?)\s+(\d{5}(?:-\d{4})?|[A-Za-z]\d[A-Za-z] ?\d[A-Za-z]\d)$/;

/**
 * A state or province as its 2-letter code: a 2-letter value is upper-cased, a full US state or Canadian
 * province name (any case) becomes its code; anything else is a 400 naming `field`.
 */
export function normaliseState(value: string, field: string): string {
  const trimmed = value.trim().replace(/\s+/g, ' ');
  if (/^[A-Za-z]{2}$/.test(trimmed)) return trimmed.toUpperCase();
  const code = STATE_CODES.get(trimmed.toLowerCase()) ?? STATE_CODES.get(trimmed.toLowerCase().replace(/\./g, ''));
  if (!code) throw ApiError.invalid(field, 'must be a 2-letter code or the full name of a US state or Canadian province or territory');
  return code;
}

const isState = (part: string) => /^[A-Za-z]{2}$/.test(part) || STATE_CODES.has(part.toLowerCase());

export interface AddressParts {
  street: string;
  line2: string | null;
  city: string;
  state: string;
  zip: string | null;
  country: string | null;
}

/**
 * Splits a one-line address: `street[, line 2], city, state zip[, country]` (the state and zip may also be
 * separate parts, the zip may be missing). Null when the text does not have that form.
 */
export function splitAddress(text: string): AddressParts | null {
  const parts = text.split(',').map((p) => p.trim()).filter((p) => p !== '');
  let country: string | null = null;
  const last = parts[parts.length - 1] ?? '';
  if (parts.length >= 4 && !/\d/.test(last) && !isState(last)) country = parts.pop()!;
  let zip: string | null = null;
  let state: string | null = null;
  if (ZIP.test(parts[parts.length - 1] ?? '')) zip = parts.pop()!;
  const stateAndZip = zip === null ? STATE_AND_ZIP.exec(parts[parts.length - 1] ?? '') : null;
  if (stateAndZip && isState(stateAndZip[1]!)) {
    parts.pop();
    state = stateAndZip[1]!;
    zip = stateAndZip[2]!;
  } else if (isState(parts[parts.length - 1] ?? '')) {
    state = parts.pop()!;
  }
  if (state === null || parts.length < 2) return null;
  const city = parts.pop()!;
  const [street, ...rest] = parts;
  return { street: street!, line2: rest.length ? rest.join(', ') : null, city, state, zip: zip?.toUpperCase() ?? null, country };
}
