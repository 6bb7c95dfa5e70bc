import { ApiError } from '../../errors';
import { eventDefinition, isOperational, SUBSCRIBABLE_CATEGORIES, SUBSCRIBABLE_NAMES } from '../../events/registry';

/**
 * Validates what an endpoint subscribes to and stores it by event key: exact names of either shape
 * (`employee.created`, `workorder.created`, `po.approved`), whole categories (`project.*`, `workorder.*`,
 * `po.*`), or `*` for every event of the company's records. The operational events (`endpoint.*`, `delivery.*`) are
 * had by name or category only: they name the company's other endpoints, which a subscriber of everything (another
 * system's integration) has no business knowing of.
 */
export function normaliseSubscriptions(requested: string[]): string[] {
  const normalised = requested.map((entry) => {
    if (entry === '*') return entry;
    if (entry.endsWith('.*')) {
      const category = SUBSCRIBABLE_CATEGORIES.get(entry.slice(0, -2));
      if (category) return `${category}.*`;
    } else {
      const event = SUBSCRIBABLE_NAMES.get(entry);
      if (event) return event.key;
    }
    throw ApiError.invalid('event_types', `contains "${entry}", which is neither an event type nor a category (e.g. project.*)`);
  });
  return [...new Set(normalised)];
}

/** Whether subscriptions stored by normaliseSubscriptions include the event with this key. */
export function isSubscribed(subscriptions: readonly string[], eventKey: string): boolean {
  const { key, category } = eventDefinition(eventKey);
  return subscriptions.includes(key) || subscriptions.includes(`${category}.*`) || (subscriptions.includes('*') && !isOperational(key));
}
