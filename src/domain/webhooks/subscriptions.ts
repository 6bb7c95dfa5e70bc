import { ApiError } from '../../errors';
import { catalogEventName, EVENT_TYPES } from '../../events/catalog';

const categoryOf = (eventType: string) => eventType.slice(0, eventType.indexOf('.'));
const CATEGORIES = new Set(EVENT_TYPES.map(categoryOf));
/** Shape B spellings a subscriber may use, mapped to the shape A names we store. */
const BY_CATALOG_NAME = new Map(EVENT_TYPES.map((t) => [catalogEventName(t), t]));
const CATALOG_CATEGORIES = new Map(EVENT_TYPES.map((t) => [categoryOf(catalogEventName(t)), categoryOf(t)]));

/**
 * Validates what an endpoint subscribes to and stores it in shape A names: exact event types
 * (`employee.created`, or the shape B `workorder.created`), whole categories (`project.*`, `workorder.*`),
 * or `*` for everything.
 */
export function normaliseSubscriptions(requested: string[]): string[] {
  const normalised = requested.map((entry) => {
    if (entry === '*') return entry;
    if (entry.endsWith('.*')) {
      const category = entry.slice(0, -2);
      const known = CATEGORIES.has(category) ? category : CATALOG_CATEGORIES.get(category);
      if (known) return `${known}.*`;
    } else {
      const known = (EVENT_TYPES as readonly string[]).includes(entry) ? entry : BY_CATALOG_NAME.get(entry);
      if (known) return known;
    }
    throw ApiError.invalid('event_types', `contains "${entry}", which is neither an event type nor a category (e.g. project.*)`);
  });
  return [...new Set(normalised)];
}

/** Subscription entries any of which makes an endpoint receive `eventType`. */
export function subscriptionKeys(eventType: string): string[] {
  return [eventType, `${categoryOf(eventType)}.*`, '*'];
}

export function isSubscribed(subscriptions: readonly string[], eventType: string): boolean {
  return subscriptionKeys(eventType).some((key) => subscriptions.includes(key));
}
