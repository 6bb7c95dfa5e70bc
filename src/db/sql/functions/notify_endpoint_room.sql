-- Tells the dispatchers an endpoint has room: endpoint_room for its deferred deliveries, outbox_room for events that
-- wait for it (src/delivery/outbox/dispatcher.ts).
create or replace function notify_endpoint_room(p_endpoint uuid)
  returns void
  language plpgsql
as $$
begin
  if endpoint_defers(p_endpoint) then
    perform pg_notify('endpoint_room', p_endpoint::text);
  end if;
  if exists (select 1 from webhook_endpoints e join outbox_events o on o.company_id = e.company_id and o.dispatched_at is null and o.waits_for is not null
              where e.id = p_endpoint and p_endpoint = any(o.waits_for)) then
    perform pg_notify('outbox_room', p_endpoint::text);
  end if;
end
$$;
