-- Appends claimed events to their feeds (src/delivery/outbox/feeds.ts, APPEND_FEED_EVENTS): each feed's rows
-- numbered in commit order under the feed's lock, rows written before skipped; returns the events held back behind an
-- earlier event of their company that is not in the feed yet and not in this claim (docs/decisions.md, "Order across
-- dispatchers").
create or replace function append_feed_events(p_rows json, p_claimed uuid[])
  returns uuid[]
  language plpgsql
as $$
declare
  v_held uuid[];
  v_told int;
  v_written_at timestamptz;
begin
  perform 1 from webhook_endpoints e
    where e.id in (select distinct (r ->> 'endpoint_id')::uuid from json_array_elements(p_rows) r)
    order by e.id for update;
  -- Taken once the feeds are locked: a feed's entries are written at times that follow their positions.
  v_written_at := clock_timestamp();
  with rows as (
    select r.id, r.company_id, r.endpoint_id, r.event_id, r.event_key, r.event_type, r.payload, r.n, o.created_at as event_created_at
      from rows from (json_to_recordset(p_rows) as (id uuid, company_id uuid, endpoint_id uuid, event_id uuid, event_key text, event_type text, payload text))
           with ordinality as r(id, company_id, endpoint_id, event_id, event_key, event_type, payload, n)
      join outbox_events o on o.id = r.event_id
     where not exists (select 1 from webhook_feed_events f where f.endpoint_id = r.endpoint_id and f.event_id = r.event_id)
  ), companies as (
    select company_id, max(event_created_at) as until from rows group by company_id
  ), elsewhere as (
    -- Earlier events not in this claim: another dispatcher's, or a fresh one unclaimed (let go, its claim run out, or
    -- being claimed at this moment, which claimed_until does not show before that claim commits). A waiting event was
    -- written to the feeds at its first claim. From each company's oldest undispatched event up to its latest one here,
    -- along the outbox's index of undispatched events.
    select o.company_id, o.id, o.created_at from companies c
      join outbox_events o on o.company_id = c.company_id and o.dispatched_at is null and o.created_at <= c.until
     where (o.claimed_until > now() or o.waits_for is null) and o.id <> all(p_claimed)
  ), held as (
    select r.id, r.event_id from rows r
     where exists (
       select 1 from elsewhere b
        where b.company_id = r.company_id and (b.created_at, b.id) < (r.event_created_at, r.event_id)
          and not exists (select 1 from webhook_feed_events f where f.endpoint_id = r.endpoint_id and f.event_id = b.id))
  ), fresh as (
    select r.*, row_number() over (partition by r.endpoint_id order by r.n) as k from rows r where r.id not in (select id from held)
  ), written as (
    insert into webhook_feed_events (endpoint_id, position, id, company_id, event_id, event_key, event_type, payload, created_at)
    select f.endpoint_id, e.feed_position + f.k, f.id, f.company_id, f.event_id, f.event_key, f.event_type, f.payload, v_written_at
      from fresh f join webhook_endpoints e on e.id = f.endpoint_id
    returning endpoint_id
  ), advanced as (
    update webhook_endpoints e set feed_position = e.feed_position + w.n
      from (select endpoint_id, count(*) as n from written group by endpoint_id) w
     where e.id = w.endpoint_id
    returning e.id
  ), told as (
    select pg_notify('webhook_feeds', a.id::text) from advanced a
  )
  select coalesce((select array_agg(distinct h.event_id) from held h), '{}'), (select count(*) from told) into v_held, v_told;
  return v_held;
end
$$;
