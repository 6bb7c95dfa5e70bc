import { Embeddable, Property } from '@mikro-orm/core';
import { ApiError } from '../../errors';

/**
 * The postal address of a customer (billing), a location, a vendor or a vendor's site: one set of columns,
 * embedded under each owner's prefix. Every part is null when not known.
 */
@Embeddable()
export class PostalAddress {
  @Property({ type: 'text', fieldName: 'address_line_1', nullable: true })
  line1: string | null = null;

  @Property({ type: 'text', fieldName: 'address_line_2', nullable: true })
  line2: string | null = null;

  @Property({ type: 'text', nullable: true })
  city: string | null = null;

  /** The state, province or territory; vendors and their sites keep the 2-letter code of a US or Canadian one. */
  @Property({ type: 'text', nullable: true })
  province: string | null = null;

  @Property({ type: 'text', nullable: true })
  postalCode: string | null = null;

  @Property({ type: 'text', nullable: true })
  country: string | null = null;
}

/** US states, DC and territories, and Canadian provinces and territories: code → full name. */
const STATES: Readonly<Record<string, string>> = {
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
};
const CODE_BY_NAME: ReadonlyMap<string, string> = new Map(Object.entries(STATES).map(([code, name]) => [name.toLowerCase(), code]));

/** How one-line addresses name the two countries whose states are known; a final part like these is the country. */
const COUNTRY_NAMES = new Set(['us', 'usa', 'u.s.', 'u.s.a.', 'united states', 'united states of america', 'ca', 'can', 'canada']);

const ZIP = /^(\d{5}(?:-\d{4})?|[A-Za-z]\d[A-Za-z] ?\d[A-Za-z]\d)$/;
const STATE_AND_ZIP = /^(.+?)\s+(\d{5}(?:-\d{4})?|[A-Za-z]\d[A-Za-z] ?\d[A-Za-z]\d)$/;

/**
 * A US state or Canadian province or territory as its 2-letter code, given the code or the full name in any
 * case; anything else is a 400 naming `field`.
 */
export function normaliseState(value: string, field: string): string {
  const code = stateCode(value);
  if (!code) throw ApiError.invalid(field, 'must be the 2-letter code or the full name of a US state or Canadian province or territory');
  return code;
}

function stateCode(value: string): string | null {
  const text = value.trim().replace(/\s+/g, ' ');
  if (STATES[text.toUpperCase()]) return text.toUpperCase();
  return CODE_BY_NAME.get(text.toLowerCase()) ?? CODE_BY_NAME.get(text.toLowerCase().replace(/\./g, '')) ?? null;
}

const isState = (part: string) => stateCode(part) !== null;
/** A part that ends an address's street-city-state section: a state, a zip, or both. */
const isStatePart = (part: string) => isState(part) || ZIP.test(part) || (STATE_AND_ZIP.test(part) && isState(STATE_AND_ZIP.exec(part)![1]!));

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
  // "…, IL 62704, US": the last part is the country when what precedes it closes the address; "CA" alone is California.
  const countryLike = COUNTRY_NAMES.has(last.toLowerCase()) || (!/\d/.test(last) && !isState(last));
  if (parts.length >= 4 && countryLike && isStatePart(parts[parts.length - 2]!)) country = parts.pop()!;
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
