import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../../events/outbox';
import { contactCreatedPayload, customerCreatedPayload, locationCreatedPayload } from '../../events/payloads/business';
import type { Actor } from '../accounts/actor';
import { findIdIgnoringCase, lockNaturalKey } from '../natural-keys';
import { Contact } from './contact.entity';
import { Customer } from './customer.entity';
import { Location } from './location.entity';

export interface CustomerDetails {
  name: string;
  type?: string;
  email?: string;
  phone?: string;
  website?: string;
  status?: string;
  notes?: string;
}

export interface LocationDetails {
  name: string;
  addressLine1?: string;
  addressLine2?: string;
  city?: string;
  province?: string;
  postalCode?: string;
  country?: string;
  notes?: string;
}

export interface ContactDetails {
  firstName: string;
  lastName: string;
  title?: string;
  email?: string;
  phone?: string;
  mobile?: string;
  notes?: string;
  isPrimary?: boolean;
  tags?: string[];
}

/*
 * The ensure* operations are idempotent find-or-create steps: each runs in its own transaction, matches the
 * natural key case-insensitively, and only a creation writes a row and its event. Running one twice (a
 * retried activity) finds what the first run made.
 */

export async function ensureCustomer(em: EntityManager, actor: Actor, details: CustomerDetails): Promise<Customer> {
  return em.transactional(async (tx) => {
    const name = details.name.trim();
    await lockNaturalKey(tx, actor.companyId, 'customer', name);
    const id = await findIdIgnoringCase(tx, 'customers', { company_id: actor.companyId }, { name });
    if (id) return tx.findOneOrFail(Customer, { id });
    const customer = tx.create(Customer, {
      company: actor.companyId,
      name,
      type: details.type ?? null,
      email: details.email ?? null,
      phone: details.phone ?? null,
      website: details.website ?? null,
      status: details.status ?? null,
      notes: details.notes ?? null,
    });
    recordEvent(tx, actor, 'customer.created', customerCreatedPayload(customer, actor.apiKeyId));
    return customer;
  });
}

export async function ensureLocation(
  em: EntityManager,
  actor: Actor,
  customerId: string,
  details: LocationDetails,
): Promise<Location> {
  return em.transactional(async (tx) => {
    const name = details.name.trim();
    await lockNaturalKey(tx, customerId, 'location', name);
    const customer = await tx.findOneOrFail(Customer, { id: customerId, company: actor.companyId });
    const id = await findIdIgnoringCase(tx, 'locations', { customer_id: customerId }, { name });
    if (id) return tx.findOneOrFail(Location, { id });
    const location = tx.create(Location, {
      company: actor.companyId,
      customer,
      name,
      addressLine1: details.addressLine1 ?? null,
      addressLine2: details.addressLine2 ?? null,
      city: details.city ?? null,
      province: details.province ?? null,
      postalCode: details.postalCode ?? null,
      country: details.country ?? null,
      notes: details.notes ?? null,
    });
    recordEvent(tx, actor, 'location.created', locationCreatedPayload(location, customer, actor.apiKeyId));
    return location;
  });
}

/** Finds or creates each contact of the customer, returning them in the order given. */
export async function ensureContacts(
  em: EntityManager,
  actor: Actor,
  customerId: string,
  contacts: ContactDetails[],
): Promise<Contact[]> {
  if (contacts.length === 0) return [];
  return em.transactional(async (tx) => {
    const customer = await tx.findOneOrFail(Customer, { id: customerId, company: actor.companyId });
    const result: Contact[] = [];
    const seen = new Set<string>();
    for (const details of contacts) {
      const firstName = details.firstName.trim();
      const lastName = details.lastName.trim();
      const key = `${firstName}\u001f${lastName}`.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      await lockNaturalKey(tx, customerId, 'contact', firstName, lastName);
      const id = await findIdIgnoringCase(tx, 'contacts', { customer_id: customerId }, { first_name: firstName, last_name: lastName });
      if (id) {
        result.push(await tx.findOneOrFail(Contact, { id }));
        continue;
      }
      const contact = tx.create(Contact, {
        company: actor.companyId,
        customer,
        firstName,
        lastName,
        title: details.title ?? null,
        email: details.email ?? null,
        phone: details.phone ?? null,
        mobile: details.mobile ?? null,
        notes: details.notes ?? null,
        isPrimary: details.isPrimary ?? false,
        tags: details.tags ?? [],
      });
      recordEvent(tx, actor, 'contact.created', contactCreatedPayload(contact, customer, actor.apiKeyId));
      result.push(contact);
    }
    return result;
  });
}
