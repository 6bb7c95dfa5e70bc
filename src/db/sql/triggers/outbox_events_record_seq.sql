-- An event's place among its record's events, taken at commit: a transaction that began first but committed later
-- comes after (docs/ordering.md). A constraint trigger cannot be created "or replace": dropped and created, in the
-- transaction that applies the files.
drop trigger if exists outbox_events_record_seq on outbox_events;
create constraint trigger outbox_events_record_seq
  after insert on outbox_events deferrable initially deferred
  for each row when (new.record_key is not null) execute function assign_record_seq();
