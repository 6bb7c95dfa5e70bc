import type { Contact } from './contact.entity';
import type { Customer } from './customer.entity';
import type { Location } from './location.entity';
import type { ChangeContext } from '../records/record-service';
import type {
  ContactCreatedData,
  ContactDeletedData,
  ContactUpdatedData,
  CustomerCreatedData,
  CustomerDeletedData,
  CustomerUpdatedData,
  LocationCreatedData,
  LocationDeletedData,
  LocationUpdatedData,
} from '../../generated/schemas';
import { postalAddressData, stamp } from '../event-format';

/*
 * Customer, location and contact events exist in shape A only (6.1); shape B endpoints receive them in
 * shape A. Relations the builders read (a location's customer) must be loaded.
 */

const customerFields = (customer: Customer) => ({
  id: customer.id,
  name: customer.name,
  type: customer.type,
  email: customer.email,
  phone: customer.phone,
  billing_address: postalAddressData(customer.billingAddress),
});

export const customerCreatedData = (customer: Customer, ctx: ChangeContext): CustomerCreatedData => ({
  ...customerFields(customer),
  ...stamp('created', ctx.at, ctx.actor.apiKeyId),
});

/** customer.updated: "the same complete current record", with updated_at and updated_by. */
export const customerUpdatedData = (customer: Customer, ctx: ChangeContext): CustomerUpdatedData => ({
  ...customerFields(customer),
  ...stamp('updated', ctx.at, ctx.actor.apiKeyId),
});

export const customerDeletedData = (customer: Customer, ctx: ChangeContext): CustomerDeletedData => ({
  id: customer.id,
  name: customer.name,
  ...stamp('deleted', ctx.at, ctx.actor.apiKeyId),
});

const locationFields = (location: Location) => {
  const customer = location.customer.getEntity();
  return {
    id: location.id,
    customer_id: customer.id,
    name: location.name,
    address_line_1: location.address.line1,
    address_line_2: location.address.line2,
    city: location.address.city,
    province: location.address.province,
    postal_code: location.address.postalCode,
    country: location.address.country,
    coordinates: { latitude: location.latitude, longitude: location.longitude },
    customer: { id: customer.id, name: customer.name },
  };
};

export const locationCreatedData = (location: Location, ctx: ChangeContext): LocationCreatedData => ({
  ...locationFields(location),
  ...stamp('created', ctx.at, ctx.actor.apiKeyId),
});

/** location.updated: "the same complete current record", with updated_at and updated_by. */
export const locationUpdatedData = (location: Location, ctx: ChangeContext): LocationUpdatedData => ({
  ...locationFields(location),
  ...stamp('updated', ctx.at, ctx.actor.apiKeyId),
});

export const locationDeletedData = (location: Location, ctx: ChangeContext): LocationDeletedData => ({
  id: location.id,
  customer_id: location.customer.id,
  name: location.name,
  ...stamp('deleted', ctx.at, ctx.actor.apiKeyId),
});

export const contactCreatedData = (contact: Contact, ctx: ChangeContext): ContactCreatedData => ({
  id: contact.id,
  customer_id: contact.customer.id,
  customer_name: contact.customer.getEntity().name,
  first_name: contact.firstName,
  last_name: contact.lastName,
  email: contact.email,
  phone: contact.phone,
  role: contact.title,
  is_primary: contact.isPrimary,
  ...stamp('created', ctx.at, ctx.actor.apiKeyId),
});

export const contactUpdatedData = (contact: Contact, ctx: ChangeContext): ContactUpdatedData => ({
  id: contact.id,
  customer_id: contact.customer.id,
  customer_name: contact.customer.getEntity().name,
  first_name: contact.firstName,
  last_name: contact.lastName,
  email: contact.email,
  phone: contact.phone,
  mobile: contact.mobile,
  title: contact.title,
  is_primary: contact.isPrimary,
  ...stamp('updated', ctx.at, ctx.actor.apiKeyId),
});

export const contactDeletedData = (contact: Contact, ctx: ChangeContext): ContactDeletedData => ({
  id: contact.id,
  customer_id: contact.customer.id,
  first_name: contact.firstName,
  last_name: contact.lastName,
  ...stamp('deleted', ctx.at, ctx.actor.apiKeyId),
});
