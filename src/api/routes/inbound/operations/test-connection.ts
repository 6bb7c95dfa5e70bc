import { defineOperation } from '../operation';

/** Confirms the key, signature and envelope are right; writes nothing. */
export const testConnection = defineOperation<Record<string, unknown>>({
  eventType: 'test.connection',
  schema: 'inbound/test.connection.json',
  summary: 'Checks the API key, signature and envelope; writes nothing.',
  async handle({ actor }) {
    return { message: `Connection successful for company ${actor.companyId}`, recordId: null };
  },
});
