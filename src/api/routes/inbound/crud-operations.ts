import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../domain/accounts/actor';
import type { ChangeOptions } from '../../../domain/records/record-service';
import { ApiError } from '../../../errors';
import { defineOperation, type InboundOperation } from './operation';

/**
 * An inbound `<record>.created / .updated / .deleted` family (webhooks.md 4): records are identified by their
 * natural key ("Record identified by"), and the changes go through the same service as REST, so both emit
 * the same events. Its data schemas are the `$defs` created, updated and deleted of `schema`.
 */
export interface CrudFamily<Created, Updated, Deleted, Create, Update, Saved extends { id: string }> {
  /** The event_type prefix: `customer`. */
  record: string;
  schema: string;
  service: RecordWrites<Create, Update, Saved>;
  /** The data field a missing record's 404 names (the first field of the natural key). */
  keyField: string;
  /** How messages name the record an update or delete identifies: `Customer "Acme"`. */
  describe(data: Updated | Deleted): string;
  /** How messages name a new record. */
  describeNew(data: Created): string;
  /** Messages other than "<record> created" and "<record> deleted" (a time off request reads as processed, then cancelled). */
  messages?: { created?(data: Created, record: Saved): string; deleted?(data: Deleted): string };
  /** The id of the record an update or delete identifies, or null. */
  find(em: EntityManager, companyId: string, data: Updated | Deleted): Promise<string | null>;
  /** The service's create input: references by natural key become ids (400 naming the field when unknown). */
  toCreate(em: EntityManager, companyId: string, data: Created): Promise<Create>;
  /** The service's update patch: the fields to change, references resolved. */
  toUpdate(em: EntityManager, companyId: string, data: Updated): Promise<Update>;
}

/** The writes of a RecordService that inbound operations use. */
export interface RecordWrites<Create, Update, Saved extends { id: string } = { id: string }> {
  label: string;
  create(em: EntityManager, actor: Actor, input: Create, options?: ChangeOptions): Promise<Saved>;
  change(em: EntityManager, actor: Actor, id: string, patch: Update, options?: ChangeOptions): Promise<{ changed: boolean }>;
  remove(em: EntityManager, actor: Actor, id: string, options?: ChangeOptions): Promise<void>;
}

export function crudOperations<Created, Updated, Deleted, Create, Update, Saved extends { id: string }>(
  family: CrudFamily<Created, Updated, Deleted, Create, Update, Saved>,
): InboundOperation<never>[] {
  const { record, service } = family;
  const identify = async (em: EntityManager, companyId: string, data: Updated | Deleted) => {
    const id = await family.find(em, companyId, data);
    if (!id) throw new ApiError('NOT_FOUND', `${family.describe(data)} not found`, { field: family.keyField, reason: 'does not exist' });
    return id;
  };
  const created = defineOperation<Created>({
    eventType: `${record}.created`,
    schema: `${family.schema}#/$defs/created`,
    summary: `Creates a ${service.label.toLowerCase()}.`,
    async handle({ data, actor, em, eventId }) {
      const input = await family.toCreate(em, actor.companyId, data);
      const saved = await service.create(em, actor, input, { eventId });
      return { message: family.messages?.created?.(data, saved) ?? `${family.describeNew(data)} created`, recordId: saved.id };
    },
  });
  const updated = defineOperation<Updated>({
    eventType: `${record}.updated`,
    schema: `${family.schema}#/$defs/updated`,
    summary: `Updates the ${service.label.toLowerCase()} the data identifies; only the fields given change.`,
    async handle({ data, actor, em, eventId }) {
      const id = await identify(em, actor.companyId, data);
      const { changed } = await service.change(em, actor, id, await family.toUpdate(em, actor.companyId, data), { eventId });
      const message = changed ? `${family.describe(data)} updated` : `${family.describe(data)} unchanged: it already had these values, so no event was sent`;
      return { message, recordId: id };
    },
  });
  const deleted = defineOperation<Deleted>({
    eventType: `${record}.deleted`,
    schema: `${family.schema}#/$defs/deleted`,
    summary: `Deletes the ${service.label.toLowerCase()} the data identifies.`,
    async handle({ data, actor, em, eventId }) {
      const id = await identify(em, actor.companyId, data);
      await service.remove(em, actor, id, { eventId });
      return { message: family.messages?.deleted?.(data) ?? `${family.describe(data)} deleted`, recordId: id };
    },
  });
  return [created, updated, deleted] as InboundOperation<never>[];
}

/** Copies `data` without the fields that only identify the record. */
export function without<T extends object, K extends keyof T>(data: T, ...keys: K[]): Omit<T, K> {
  const copy = { ...data };
  for (const key of keys) delete copy[key];
  return copy;
}
