-- Trigger function of outbox_events_record_seq: an event's place among its record's events, taken when its transaction
-- commits (docs/ordering.md), in the order the transaction wrote them (its firings come in that order). A transaction
-- with events of several records first takes all of their counters, in one order, by company and record key
-- (src/delivery/README.md, "Lock order"): two transactions that wrote events of the same records in other orders then
-- never wait for each other's counters in a cycle.
create or replace function assign_record_seq()
  returns trigger
  language plpgsql
as $$
declare
  v_seq bigint;
begin
  if coalesce(current_setting('record_seq.counters_taken', true), '') <> '1' then
    perform set_config('record_seq.counters_taken', '1', true);
    -- The events without a place that this statement sees are this transaction's own: every other transaction's were
    -- numbered before it committed. Only a transaction with several records can wait for another in a cycle.
    with records as (
      select distinct company_id, record_key from outbox_events where record_key is not null and record_seq is null
    )
    insert into record_sequences as r (company_id, record_key, last_seq)
      select company_id, record_key, 0 from records where (select count(*) from records) > 1
       order by company_id, record_key
      on conflict (company_id, record_key) do update set last_seq = r.last_seq;
  end if;
  insert into record_sequences as r (company_id, record_key, last_seq) values (new.company_id, new.record_key, 1)
    on conflict (company_id, record_key) do update set last_seq = r.last_seq + 1
    returning r.last_seq into v_seq;
  update outbox_events set record_seq = v_seq where id = new.id;
  return null;
end
$$;
