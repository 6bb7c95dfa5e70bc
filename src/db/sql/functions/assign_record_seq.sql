-- Trigger function of outbox_events_record_seq: an event's place among its record's events, taken when its
-- transaction commits (docs/ordering.md).
create or replace function assign_record_seq()
  returns trigger
  language plpgsql
as $$
declare
  v_seq bigint;
begin
  insert into record_sequences as r (company_id, record_key, last_seq) values (new.company_id, new.record_key, 1)
    on conflict (company_id, record_key) do update set last_seq = r.last_seq + 1
    returning r.last_seq into v_seq;
  update outbox_events set record_seq = v_seq where id = new.id;
  return null;
end
$$;
