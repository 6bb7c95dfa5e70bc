-- Trigger function of webhook_endpoints_operational_events: an endpoint disabled, its breaker opened or closed, as
-- events of the company (docs/operations.md).
create or replace function raise_endpoint_operational_events()
  returns trigger
  language plpgsql
as $$
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
end
$$;
