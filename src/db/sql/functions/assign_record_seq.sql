-- Trigger function of outbox_events_record_seq: each event's place among its record's events, taken when its
-- transaction commits (docs/ordering.md). The transaction's first firing numbers all of its events at once and takes
-- their records' counters in one order, by company and record key (src/delivery/README.md, "Lock order"): two
-- transactions that wrote events of the same records in other orders never wait for each other's counters in a
-- cycle. Its later firings find their event numbered.
create or replace function assign_record_seq()
  returns trigger
  language plpgsql
as $$
begin
  if exists (select 1 from outbox_events where id = new.id and record_seq is not null) then
    return null;
  end if;
  -- The events without a place that this statement sees are this transaction's own: every other transaction's were
  -- numbered before it committed. Within a record, in the order they were written (ids are time-ordered).
  with pending as (
    select id, company_id, record_key,
           row_number() over (partition by company_id, record_key order by id) as n,
           count(*) over (partition by company_id, record_key) as of_record
      from outbox_events
     where record_key is not null and record_seq is null
  ), counters as (
    insert into record_sequences as r (company_id, record_key, last_seq)
      select distinct company_id, record_key, of_record from pending order by company_id, record_key
      on conflict (company_id, record_key) do update set last_seq = r.last_seq + excluded.last_seq
      returning r.company_id, r.record_key, r.last_seq
  )
  update outbox_events o set record_seq = c.last_seq - p.of_record + p.n
    from pending p join counters c using (company_id, record_key)
   where o.id = p.id;
  return null;
end
$$;
