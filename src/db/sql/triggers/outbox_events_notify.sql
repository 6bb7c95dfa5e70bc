-- New events: the dispatchers claim them at once (LISTEN outbox_events), not at their next poll.
create or replace trigger outbox_events_notify
  after insert on outbox_events
  for each statement execute function notify_outbox_event();
