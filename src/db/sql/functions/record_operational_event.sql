-- Appends an operational event to the outbox, as any change's event is.
create or replace function record_operational_event(p_company uuid, p_event_type text, p_data jsonb, p_record_key text)
  returns void
  language sql
as $$
insert into outbox_events (id, company_id, created_at, updated_at, event_type, data, record_key)
values (gen_random_uuid(), p_company, now(), now(), p_event_type, p_data, p_record_key)
$$;
