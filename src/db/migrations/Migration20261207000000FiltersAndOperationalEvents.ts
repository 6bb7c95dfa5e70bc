import { Migration } from '@mikro-orm/migrations';

/** The five operational event types (schemas/events/a/endpoint.*.json, delivery.*.json). */
const OPERATIONAL = `'{endpoint.disabled,endpoint.circuit_opened,endpoint.circuit_closed,delivery.failed,delivery.recovered}'::text[]`;

/**
 * Issue 47. An endpoint's content filter (src/delivery/endpoint-filter.ts), and the operational events: an endpoint
 * disabled, its breaker opened or closed, a delivery failed or recovered become outbox events of the company.
 *
 * They are raised by triggers on the state changes themselves, in the transaction that makes them (docs/decisions.md):
 * the breaker moves and the delivery's state are written inside the PL/pgSQL delivery functions, the disabling and a
 * failure in TypeScript, the closing by hand in both; a trigger sees every one of them, whichever code path or later
 * version of those functions writes it, and commits or rolls back with it. Each trigger's WHEN clause keeps it off the
 * happy path: an attempt that delivers a delivery never failed runs no trigger function.
 */
export class Migration20261207000000FiltersAndOperationalEvents extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add column "filter" jsonb null;`);

    // Timestamps in events are ISO 8601 UTC with milliseconds, as toISOString writes them.
    this.addSql(`create function iso_utc(p_at timestamptz) returns text language sql immutable as $$
      select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;`);

    // An event of the company no API key made: every subscribed endpoint gets it, but the one it is about.
    // Its record (src/events/record-keys.ts) is the endpoint or the delivery it is about: an endpoint ordered per record gets
    // an endpoint's events in the order they happened (its breaker opened before it closed).
    this.addSql(`create function record_operational_event(p_company uuid, p_event_type text, p_data jsonb, p_record_key text) returns void language sql as $$
      insert into outbox_events (id, company_id, created_at, updated_at, event_type, data, record_key)
      values (gen_random_uuid(), p_company, now(), now(), p_event_type, p_data, p_record_key) $$;`);

    // The endpoint by its host, not its URL: a URL's path or query may hold a token (a Slack hook's does), and the event
    // may go to another system's endpoint of the company.
    this.addSql(`create function endpoint_summary(p_id uuid, p_url text, p_description text) returns jsonb language sql immutable as $$
      select jsonb_build_object('id', p_id, 'host', substring(p_url from '^[A-Za-z][A-Za-z0-9+.-]*://(\\[[^]]+\\]|[^/:?#]+)'), 'description', p_description) $$;`);

    // Disabled (from active: a 410, failing too long, or through the API); the breaker of an active endpoint opened
    // (from closed; a failed probe reopening it is no news) or closed (by a probe, any success, or by hand).
    this.addSql(`create function raise_endpoint_operational_events() returns trigger language plpgsql as $$
      declare
        v_endpoint jsonb := endpoint_summary(new.id, new.url, new.description);
      begin
        if old.status = 'active' and new.status = 'disabled' then
          perform record_operational_event(new.company_id, 'endpoint.disabled', jsonb_build_object(
            'endpoint', v_endpoint, 'reason', new.disabled_reason, 'disabled_at', iso_utc(coalesce(new.disabled_at, now()))), 'endpoint:' || new.id);
        elsif old.status = 'active' and new.status = 'active' and old.circuit_state = 'closed' and new.circuit_state <> 'closed' then
          perform record_operational_event(new.company_id, 'endpoint.circuit_opened', jsonb_build_object(
            'endpoint', v_endpoint, 'opened_at', iso_utc(coalesce(new.circuit_opened_at, now())), 'next_probe_at', iso_utc(new.circuit_probe_at),
            'failing_deliveries', cardinality(new.circuit_failing_deliveries)), 'endpoint:' || new.id);
        elsif old.status = 'active' and new.status = 'active' and old.circuit_state <> 'closed' and new.circuit_state = 'closed' then
          perform record_operational_event(new.company_id, 'endpoint.circuit_closed', jsonb_build_object(
            'endpoint', v_endpoint, 'opened_at', iso_utc(old.circuit_opened_at), 'closed_at', iso_utc(now())), 'endpoint:' || new.id);
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger webhook_endpoints_operational_events after update of status, circuit_state on webhook_endpoints
      for each row when (old.status is distinct from new.status or old.circuit_state is distinct from new.circuit_state)
      execute function raise_endpoint_operational_events();`);

    // A delivery failed (its attempts used up, a permanent failure, its endpoint ended), or delivered after it had
    // failed (a re-run). Not for test deliveries, nor for deliveries of operational events: two failing endpoints
    // subscribed to each other's failures would otherwise tell each other about it for ever.
    this.addSql(`create function raise_delivery_operational_events() returns trigger language plpgsql as $$
      declare
        v_endpoint jsonb;
      begin
        select endpoint_summary(e.id, e.url, e.description) into v_endpoint from webhook_endpoints e where e.id = new.endpoint_id;
        if new.status = 'failed' then
          perform record_operational_event(new.company_id, 'delivery.failed', jsonb_build_object(
            'delivery_id', new.id, 'event_id', new.event_id, 'event_type', new.event_type, 'endpoint', v_endpoint,
            'attempt_count', new.attempt_count, 'last_status_code', new.last_status_code, 'last_error', new.last_error,
            'failed_at', iso_utc(coalesce(new.failed_at, now()))), 'delivery:' || new.id);
        else
          perform record_operational_event(new.company_id, 'delivery.recovered', jsonb_build_object(
            'delivery_id', new.id, 'event_id', new.event_id, 'event_type', new.event_type, 'endpoint', v_endpoint,
            'attempt_count', new.attempt_count, 'failed_at', iso_utc(old.failed_at), 'delivered_at', iso_utc(coalesce(new.delivered_at, now()))), 'delivery:' || new.id);
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger webhook_deliveries_operational_events after update of status on webhook_deliveries
      for each row when (
        not new.is_test and new.event_type <> all (${OPERATIONAL})
        and ((new.status = 'failed' and old.status <> 'failed') or (new.status = 'delivered' and old.status <> 'delivered' and old.failed_at is not null)))
      execute function raise_delivery_operational_events();`);
  }
}
