-- delivery.failed and delivery.recovered, never about a test delivery or a delivery of an operational event (no loops).
create or replace trigger webhook_deliveries_operational_events
  after update of status on webhook_deliveries
  for each row when (
    not new.is_test
    and new.event_type <> all ('{endpoint.disabled,endpoint.circuit_opened,endpoint.circuit_closed,delivery.failed,delivery.recovered}'::text[])
    and ((new.status = 'failed' and old.status <> 'failed') or (new.status = 'delivered' and old.status <> 'delivered' and old.failed_at is not null))
  )
  execute function raise_delivery_operational_events();
