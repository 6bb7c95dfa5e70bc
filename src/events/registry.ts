import { SHAPE_A_EVENT_NAMES, SHAPE_B_EVENT_NAMES, type ShapeAEventData, type ShapeBEventData } from '../generated/events';

/**
 * Every outbound event, from the event schemas (schemas/events/a: the 37 names of webhooks.md 6.1 and the service's
 * operational events; schemas/events/b: the 34 of 6.2). An event the service emits is known by its key: its shape A name, or,
 * for the events only the catalog describes (po.*, workorder.started, …), its shape B name. An event
 * described by both shapes carries both payloads; a delivery uses the one of the endpoint's shape.
 */

export type ShapeAName = (typeof SHAPE_A_EVENT_NAMES)[number];
export type ShapeBName = (typeof SHAPE_B_EVENT_NAMES)[number];

/**
 * Events about the account's own delivery (README "Operational events"), raised by the database as the states change
 * (src/db/sql/triggers/*_operational_events.sql). Each is about one endpoint (`data.endpoint.id`), which is
 * never sent it; in shape A for every endpoint, as the catalog does not describe them.
 */
export const OPERATIONAL_EVENT_TYPES = ['endpoint.disabled', 'endpoint.circuit_opened', 'endpoint.circuit_closed', 'delivery.failed', 'delivery.recovered'] as const satisfies readonly ShapeAName[];
const OPERATIONAL = new Set<string>(OPERATIONAL_EVENT_TYPES);

export const isOperational = (eventKey: string) => OPERATIONAL.has(eventKey);

/** The endpoint an operational event is about; null for any other event. */
export function endpointAbout(eventKey: string, data: Record<string, unknown> | null): string | null {
  if (!OPERATIONAL.has(eventKey)) return null;
  return (data?.endpoint as { id?: string } | undefined)?.id ?? null;
}

/** Shape B calls work orders workorder.*; every other name is the same in both shapes. */
type CatalogName<A extends string> = A extends `work_order.${infer Rest}` ? `workorder.${Rest}` : A;
const catalogName = (name: string) => name.replace(/^work_order\./, 'workorder.');

/** Catalog entries 6.2 delivers in shape A ("project.closed: delivered in shape A, fields as in 6.1"). */
const DELIVERED_IN_SHAPE_A = ['project.closed'] as const;
type DeliveredInShapeA = (typeof DELIVERED_IN_SHAPE_A)[number];

export type EventKey = ShapeAName | Exclude<ShapeBName, CatalogName<ShapeAName>>;

type CatalogOf<K extends EventKey> = K extends ShapeAName ? CatalogName<K> : K;

/** What recordEvent needs for event K: the data of each shape that describes it (typed by its schema). */
export type EventPayload<K extends EventKey> = (K extends ShapeAName ? { a: ShapeAEventData[K] } : { a?: undefined }) &
  (CatalogOf<K> extends DeliveredInShapeA
    ? { b?: undefined }
    : CatalogOf<K> extends ShapeBName
      ? { b: ShapeBEventData[CatalogOf<K>] }
      : { b?: undefined });

export interface EventDefinition {
  key: EventKey;
  /** The 6.1 name, or null when only the catalog describes the event. */
  shapeA: ShapeAName | null;
  /** The 6.2 name, or null when the catalog does not describe it. */
  shapeB: ShapeBName | null;
  /** Shape B endpoints get this event in shape A (the spec says so for project.closed). */
  deliveredInShapeA: boolean;
  /** The category subscriptions name as `<category>.*`: work_order for workorder.* too. */
  category: string;
}

const categoryOf = (name: string) => {
  const first = name.slice(0, name.indexOf('.'));
  return first === 'workorder' ? 'work_order' : first;
};

function buildRegistry(): EventDefinition[] {
  const shapeB = new Set<string>(SHAPE_B_EVENT_NAMES);
  const paired = new Set<string>();
  const events: EventDefinition[] = SHAPE_A_EVENT_NAMES.map((a) => {
    const b = shapeB.has(catalogName(a)) ? (catalogName(a) as ShapeBName) : null;
    if (b) paired.add(b);
    return { key: a, shapeA: a, shapeB: b, deliveredInShapeA: (DELIVERED_IN_SHAPE_A as readonly string[]).includes(a), category: categoryOf(a) };
  });
  for (const b of SHAPE_B_EVENT_NAMES) {
    if (!paired.has(b)) events.push({ key: b as EventKey, shapeA: null, shapeB: b, deliveredInShapeA: false, category: categoryOf(b) });
  }
  return events;
}

export const EVENT_REGISTRY: readonly EventDefinition[] = buildRegistry();

const BY_KEY = new Map(EVENT_REGISTRY.map((e) => [e.key as string, e]));

export function eventDefinition(key: string): EventDefinition {
  const definition = BY_KEY.get(key);
  if (!definition) throw new Error(`Unknown event ${key}`);
  return definition;
}

/** Every name a subscriber can use (the 71 of 6.1 and 6.2, and the operational events), each with the event it names. */
export const SUBSCRIBABLE_NAMES: ReadonlyMap<string, EventDefinition> = new Map<string, EventDefinition>(
  EVENT_REGISTRY.flatMap((e) => [e.shapeA, e.shapeB].filter((n) => n !== null).map((n) => [n as string, e] as const)),
);

/** Category names a subscriber can use (`po`, `workorder`, `work_order`, …), each with the category it stands for. */
export const SUBSCRIBABLE_CATEGORIES: ReadonlyMap<string, string> = new Map(
  [...SUBSCRIBABLE_NAMES.keys()].map((name) => [name.slice(0, name.indexOf('.')), categoryOf(name)]),
);
