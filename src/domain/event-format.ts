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
