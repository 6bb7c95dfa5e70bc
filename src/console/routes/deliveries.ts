import type { AppDeps } from '../../api/context';
import { getDelivery, listAlerts, listAttempts, listDeliveries, rerunDelivery } from '../../delivery/deliveries-service';
import { listEndpoints } from '../../delivery/endpoints/endpoints-service';
import { feedStates } from '../../delivery/feeds/feed-service';
import { type WebhookDelivery } from '../../delivery/webhook-delivery.entity';
import { endpointName, WebhookEndpoint } from '../../delivery/endpoints/webhook-endpoint.entity';
import { isUuid } from '../../schemas/formats';
import type { ConsoleContext, ConsolePage } from '../context';
import { parseUtcLocal, redirectWithFlash, sendPage } from '../http';
import type { Session } from '../users/sessions';
import { alertsPage, deliveryLogPage, deliveryPage, type LogFilters } from '../views/deliveries';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../workflows/webhook-delivery.contract';

const PAGE_SIZE = 50;

const queryText = (ctx: ConsoleContext, name: string) => (typeof ctx.query[name] === 'string' ? (ctx.query[name] as string).trim() : '');

/** The log's filters from the query; the first one that cannot be used is a 400 naming it. */
function filtersOf(ctx: ConsoleContext) {
  const raw: LogFilters = {
    endpoint_id: queryText(ctx, 'endpoint_id'),
    event_type: queryText(ctx, 'event_type'),
    status: queryText(ctx, 'status'),
    from: queryText(ctx, 'from'),
    to: queryText(ctx, 'to'),
  };
  const offsetText = queryText(ctx, 'offset') || '0';
  const problems: string[] = [];
  if (raw.endpoint_id && !isUuid(raw.endpoint_id)) problems.push('The endpoint is not one of yours.');
  if (raw.status && !DELIVERY_STATUSES.includes(raw.status as DeliveryStatus)) problems.push(`The status must be one of ${DELIVERY_STATUSES.join(', ')}.`);
  if (raw.event_type.length > 100) problems.push('The event type is at most 100 characters.');
  const from = raw.from ? parseUtcLocal(raw.from) : undefined;
  const to = raw.to ? parseUtcLocal(raw.to) : undefined;
  if (from === null) problems.push('"Made from" must be a date and time.');
  if (to === null) problems.push('"Made before" must be a date and time.');
  if (!/^\d{1,9}$/.test(offsetText)) problems.push('The page offset must be a whole number.');
  return {
    raw,
    problem: problems.join(' ') || null,
    offset: Number(offsetText) || 0,
    filters: {
      endpointId: raw.endpoint_id || undefined,
      status: (raw.status || undefined) as DeliveryStatus | undefined,
      eventType: raw.event_type || undefined,
      createdFrom: from ?? undefined,
      createdBefore: to ?? undefined,
    },
  };
}

async function deliveryOf(ctx: ConsoleContext, session: Session) {
  const delivery = await getDelivery(ctx.state.em, session.user.companyId, ctx.params.id!);
  return { delivery, endpoint: await delivery.endpoint.loadOrFail() };
}

/** The delivery log (webhooks.md 5 and 6.3): filters, a delivery with its attempts and payload, Resend, open alerts. */
export function deliveryPages({ deliveryWorkflows, config }: AppDeps): ConsolePage[] {
  return [
    {
      method: 'GET',
      path: '/deliveries',
      role: 'viewer',
      async handler(ctx, session) {
        const { em } = ctx.state;
        const { companyId } = session.user;
        const { items: endpoints } = await listEndpoints(em, companyId, { limit: 100, offset: 0 });
        const { raw, problem, offset, filters } = filtersOf(ctx);
        const feedEndpoints = endpoints.filter((endpoint) => endpoint.delivery === 'feed');
        const states = await feedStates(em, feedEndpoints.map((endpoint) => endpoint.id));
        const feeds = feedEndpoints.flatMap((endpoint) => {
          const state = states.get(endpoint.id);
          return state ? [{ endpoint, state }] : [];
        });
        const empty = { filters: raw, endpoints, feeds, deliveries: [], total: 0, offset: 0, limit: PAGE_SIZE };
        if (problem) return sendPage(ctx, deliveryLogPage(session, { ...empty, error: problem }), 400);
        const { items, total } = await listDeliveries(em, companyId, { limit: PAGE_SIZE, offset }, filters);
        sendPage(ctx, deliveryLogPage(session, { ...empty, deliveries: items, total, offset }));
      },
    },
    {
      method: 'GET',
      path: '/deliveries/:id',
      role: 'viewer',
      async handler(ctx, session) {
        const { delivery, endpoint } = await deliveryOf(ctx, session);
        sendPage(ctx, deliveryPage(session, { delivery, endpoint, attempts: await listAttempts(ctx.state.em, delivery) }));
      },
    },
    {
      method: 'POST',
      path: '/deliveries/:id/resend',
      role: 'admin',
      async handler(ctx, session) {
        const { delivery, finished } = await rerunDelivery(ctx.state.em, deliveryWorkflows, config, session.user.companyId, ctx.params.id!, `resent by ${session.user.email}`);
        ctx.state.log.info({ console: 'delivery resent', userId: session.user.id, deliveryId: delivery.id }, 'console action');
        const outcome = finished ? `the attempt was made and the delivery is ${delivery.status}` : 'one more attempt is being made now';
        await redirectWithFlash(ctx, session, `/console/deliveries/${delivery.id}`, `Resend requested: ${outcome}, with the same X-Webhook-ID.`);
      },
    },
    {
      method: 'GET',
      path: '/alerts',
      role: 'viewer',
      async handler(ctx, session) {
        const { em } = ctx.state;
        const { companyId } = session.user;
        const { items } = await listAlerts(em, companyId, { limit: 100, offset: 0 }, 'open');
        const open: { alert: (typeof items)[number]; status: string; url: string }[] = [];
        const seen = new Set<string>();
        for (const alert of items) {
          // The newest alert of each delivery, or of each endpoint for the alerts of disabled endpoints.
          const about = alert.delivery ?? alert.endpoint;
          if (seen.has(about)) continue;
          seen.add(about);
          if (alert.delivery) {
            const delivery: WebhookDelivery = await getDelivery(em, companyId, alert.delivery);
            open.push({ alert, status: delivery.status, url: endpointName(await delivery.endpoint.loadOrFail()) });
          } else {
            const endpoint = await em.findOneOrFail(WebhookEndpoint, { id: alert.endpoint, company: companyId });
            open.push({ alert, status: endpoint.status, url: endpointName(endpoint) });
          }
        }
        sendPage(ctx, alertsPage(session, open));
      },
    },
  ];
}

