/**
 * Scopes an API key can hold. `<collection>:read` and `<collection>:write` guard the REST collections,
 * `webhooks:inbound` the inbound endpoint, `webhooks:manage` webhook endpoints and deliveries; `admin`
 * grants everything.
 */
export const REST_COLLECTIONS = [
  'employees',
  'contacts',
  'projects',
  'work-orders',
  'schedules',
  'timesheets',
  'time-off',
  'vendors',
  'vendor-locations',
  'purchase-orders',
  'customers',
  'locations',
  'daily-reports',
  'completion-reports',
  'skills',
] as const;

export type RestCollection = (typeof REST_COLLECTIONS)[number];

export const ADMIN_SCOPE = 'admin';
export const INBOUND_SCOPE = 'webhooks:inbound';
export const WEBHOOKS_MANAGE_SCOPE = 'webhooks:manage';

export const ALL_SCOPES: readonly string[] = [
  ...REST_COLLECTIONS.flatMap((c) => [`${c}:read`, `${c}:write`]),
  INBOUND_SCOPE,
  WEBHOOKS_MANAGE_SCOPE,
  ADMIN_SCOPE,
];

export const readScope = (collection: RestCollection) => `${collection}:read`;
export const writeScope = (collection: RestCollection) => `${collection}:write`;

export function grants(held: readonly string[], needed: string): boolean {
  return held.includes(ADMIN_SCOPE) || held.includes(needed);
}

export function unknownScopes(scopes: readonly string[]): string[] {
  return scopes.filter((s) => !ALL_SCOPES.includes(s));
}
