import type { EntityManager } from '@mikro-orm/postgresql';
import type { CompiledTransformations } from '../endpoints/endpoint-transformation';
import { APPEND_FEED_EVENTS, type EndpointRow, uuids } from './statements';

/** How soon events held back from a feed are claimed again: the dispatcher ahead of them writes its events in milliseconds. */
export const FEED_HELD_RETRY_MS = 100;

/**
 * Appends a batch's feed entries (fan-out.ts) to their feeds, before its events are marked dispatched: a dispatcher
 * dying in between leaves them to be claimed again, and append_feed_events skips what it wrote. Returns the events held
 * back behind an earlier one of their company that another dispatcher holds: they are let go whole, their deliveries
 * written when they are claimed again.
 */
export async function appendToFeeds(em: EntityManager, entries: Record<string, unknown>[], events: { id: string }[]): Promise<string[]> {
  const [{ held }] = (await APPEND_FEED_EVENTS.run(em, { entries: JSON.stringify(entries), events: uuids(events.map((event) => event.id)) })) as [{ held: string[] }];
  return held;
}

/**
 * A batch's feed entries (fan-out.ts), each in the body its feed's transformation makes of it (docs/transformations.md).
 * A feed's entry is an object, as its schema says; an entry the transformation fails on (or makes no object of) keeps
 * its place in the feed, and says why instead of the body: `{"transformation_error": {field, message, position},
 * "event_id", "event_type"}`, so the feed has no gap and its consumer sees what to fix.
 */
export async function transformedEntries(
  entries: Record<string, unknown>[],
  endpoints: Map<string, EndpointRow>,
  transformations: CompiledTransformations,
): Promise<Record<string, unknown>[]> {
  return Promise.all(
    entries.map(async (entry) => {
      const endpoint = endpoints.get(entry.endpoint_id as string);
      if (!endpoint?.transformation) return entry;
      const envelope = JSON.parse(entry.payload as string) as unknown;
      const target = { id: endpoint.id, updatedAt: endpoint.updated_at, url: null, transformation: endpoint.transformation };
      const outcome = await transformations.run(target, envelope);
      // JSON.stringify writes an object, and only an object, with a leading brace.
      if (outcome.ok && outcome.request.payload.startsWith('{')) return { ...entry, payload: outcome.request.payload };
      const error = outcome.ok
        ? { field: 'transformation.body', message: 'must make a JSON object for a feed entry', position: null }
        : { field: outcome.error.field, message: outcome.error.reason, position: outcome.error.position };
      return { ...entry, payload: JSON.stringify({ transformation_error: error, event_id: entry.event_id, event_type: entry.event_type }) };
    }),
  );
}
