import type { ContactCreate, Contact as ContactRecord, ContactUpdate } from '../../generated/schemas';
import { contactCreatedData, contactDeletedData, contactUpdatedData } from './business-events';
import { ApiError } from '../../errors';
import { RecordService } from '../records/record-service';
import { Contact } from './contact.entity';
import { Customer } from './customer.entity';
import { Location } from './location.entity';

/** People at a customer, identified by first and last name under it; optionally at one of its locations. */
export const contacts = new RecordService<Contact, ContactRecord, ContactCreate, ContactUpdate>({
  entity: Contact,
  label: 'Contact',
  wire: {
    customer_id: { relation: 'customer', target: Customer, label: 'a customer' },
    location_id: { relation: 'location', target: Location, label: 'a location' },
    first_name: 'firstName',
    last_name: 'lastName',
    title: 'title',
    email: 'email',
    phone: 'phone',
    phone_ext: 'phoneExt',
    mobile: 'mobile',
    notes: 'notes',
    is_primary: 'isPrimary',
    contact_tags: 'tags',
  },
  naturalKey: {
    scope: 'customer',
    fields: ['firstName', 'lastName'],
    describe: (c) => `The customer already has a contact named "${c.firstName} ${c.lastName}"`,
    uniqueIndex: 'contacts_customer_name_unique',
  },
  populate: ['customer'],
  async check(em, contact) {
    if (contact.location && (await em.count(Location, { id: contact.location.id, customer: contact.customer.id })) === 0) {
      throw ApiError.invalid('location_id', "must be a location of the contact's customer");
    }
  },
  events: {
    created: (contact, ctx) => ({ key: 'contact.created', payload: { a: contactCreatedData(contact, ctx) } }),
    updated: (contact, _change, ctx) => ({ key: 'contact.updated', payload: { a: contactUpdatedData(contact, ctx) } }),
    deleted: (contact, ctx) => ({ key: 'contact.deleted', payload: { a: contactDeletedData(contact, ctx) } }),
  },
});
