import type { Contact } from '../../domain/business/contact.entity';
import type { Customer } from '../../domain/business/customer.entity';
import type { Location } from '../../domain/business/location.entity';
import type { EventPayload } from '../catalog';
import { iso } from './format';

/** customer.created; shape B has no customer events, so B subscribers get shape A. */
export function customerCreatedPayload(customer: Customer, createdBy: string): EventPayload {
  return {
    data: {
      id: customer.id,
      name: customer.name,
      type: customer.type,
      email: customer.email,
      phone: customer.phone,
      // Customers carry no postal address of their own yet; the object keeps the documented shape.
      billing_address: { address_line_1: null, city: null, province: null, postal_code: null, country: null },
      created_at: iso(customer.createdAt),
      created_by: createdBy,
    },
    catalogData: null,
  };
}

export function locationCreatedPayload(location: Location, customer: Customer, createdBy: string): EventPayload {
  const hasCoordinates = location.latitude !== null && location.longitude !== null;
  return {
    data: {
      id: location.id,
      customer_id: customer.id,
      name: location.name,
      address_line_1: location.addressLine1,
      address_line_2: location.addressLine2,
      city: location.city,
      province: location.province,
      postal_code: location.postalCode,
      country: location.country,
      coordinates: hasCoordinates ? { latitude: location.latitude, longitude: location.longitude } : null,
      customer: { id: customer.id, name: customer.name },
      created_at: iso(location.createdAt),
      created_by: createdBy,
    },
    catalogData: null,
  };
}

export function contactCreatedPayload(contact: Contact, customer: Customer, createdBy: string): EventPayload {
  return {
    data: {
      id: contact.id,
      customer_id: customer.id,
      customer_name: customer.name,
      first_name: contact.firstName,
      last_name: contact.lastName,
      email: contact.email,
      phone: contact.phone,
      role: contact.title,
      is_primary: contact.isPrimary,
      created_at: iso(contact.createdAt),
      created_by: createdBy,
    },
    catalogData: null,
  };
}
