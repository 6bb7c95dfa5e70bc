import { contacts } from '../../domain/business/contacts';
import { byFlag, byId, byMember, byText } from './filters';
import { defineResource } from './resource';

export const contactsResource = defineResource({
  collection: 'contacts',
  label: 'Contact',
  plural: 'contacts',
  description: 'People at a customer, optionally at one of its locations.',
  schema: 'rest/contacts.json',
  service: contacts,
  filters: [
    byId('customer_id', 'customer', 'Contacts of this customer.'),
    byId('location_id', 'location', 'Contacts at this location.'),
    byText('email', 'email', 'Contacts with this e-mail address (ignoring case).'),
    byFlag('is_primary', 'isPrimary', 'Only primary (true) or only other (false) contacts.'),
    byMember('tag', 'tags', 'Contacts carrying this tag.'),
  ],
});
