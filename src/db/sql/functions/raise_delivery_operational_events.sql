-- Trigger function of webhook_deliveries_operational_events: delivery.failed and delivery.recovered, as events of the
-- company (docs/operations.md).
create or replace function raise_delivery_operational_events()
  returns trigger
  language plpgsql
as $$
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
end
$$;
