import type { PostalAddress } from './common/postal-address';
import type { PostalAddress as PostalAddressData } from '../generated/schemas';

/** Value formatting shared by the event payload builders. */
export const iso = (date: Date | null | undefined): string | null => (date ? date.toISOString() : null);

/** `2026-03-01T08:30:00.000Z` → date `2026-03-01` and time `08:30` (UTC). */
export function dateAndTime(date: Date | null): { date: string | null; time: string | null } {
  if (!date) return { date: null, time: null };
  const text = date.toISOString();
  return { date: text.slice(0, 10), time: text.slice(11, 16) };
}

/** One-line postal address from its parts, skipping the empty ones. */
export const joinAddress = (...parts: (string | null | undefined)[]): string | null =>
  parts.filter((p) => p && p.trim()).join(', ') || null;

/** An address as shape A carries it (a customer's billing address, a vendor's, a project's site): no second line. */
export const postalAddressData = (address: PostalAddress): PostalAddressData => ({
  address_line_1: address.line1,
  city: address.city,
  province: address.province,
  postal_code: address.postalCode,
  country: address.country,
});

/** `<verb>_at` and `<verb>_by`: when a change was made and by whom, in the order the payloads list them. */
export type Stamp<V extends string, B> = { [K in `${V}_at`]: string } & { [K in `${V}_by`]: B };

export const stamp = <V extends string, B>(verb: V, at: Date, by: B): Stamp<V, B> => ({ [`${verb}_at`]: at.toISOString(), [`${verb}_by`]: by }) as Stamp<V, B>;

/** `<verb>_by`, `<verb>_by_name` and `<verb>_at` of a lifecycle change, in that order. */
export type NamedStamp<V extends string> = { [K in `${V}_by` | `${V}_by_name` | `${V}_at`]: string };

export const namedStamp = <V extends string>(verb: V, who: { by: string; byName: string; at: Date }): NamedStamp<V> =>
  ({ [`${verb}_by`]: who.by, [`${verb}_by_name`]: who.byName, [`${verb}_at`]: who.at.toISOString() }) as NamedStamp<V>;
