-- Trigger function of outbox_events_notify: wakes the dispatchers (LISTEN outbox_events).
create or replace function notify_outbox_event()
  returns trigger
  language plpgsql
as $$
begin
  perform pg_notify('outbox_events', '');
  return null;
end
$$;
