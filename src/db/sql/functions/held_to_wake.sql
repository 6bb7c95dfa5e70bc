-- The oldest held deliveries of an endpoint, as many as it has free slots not kept for deliveries woken a moment ago,
-- marked woken, for the caller to wake (src/delivery/endpoints/endpoint-admission.ts). A deferred delivery whose run a dispatcher
-- is starting (its claim, start_claimed_until, not over) is on its way, as one woken is: it keeps its slot and is not
-- woken, since a signal that comes while a run's first task makes its first attempt fails that task (the first attempt
-- then runs again). Its own admission ends that claim.
create or replace function held_to_wake(p_endpoint uuid, p_max_in_flight integer)
  returns uuid[]
  language plpgsql
as $$
declare
  v_wake uuid[];
begin
  with held as (
    select d.id, d.created_at, d.woken_at > clock_timestamp() - interval '5 seconds' or d.start_claimed_until > clock_timestamp() as reserving
      from webhook_deliveries d where d.endpoint_id = p_endpoint and d.held_until is not null and d.held_reason is distinct from 'awaiting_predecessor'
  ), picked as (
    select h.id from held h where not coalesce(h.reserving, false) order by h.created_at, h.id
     limit greatest(0, p_max_in_flight
       - (select count(*) from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and s.expires_at > clock_timestamp())
       - (select count(*) from held h where h.reserving))
  ), locked as (
    -- Locked in one order (src/delivery/README.md, "Lock order"), not in whatever order the update would meet them.
    select d.id from webhook_deliveries d where d.id in (select id from picked) order by d.id for no key update
  ), woken as (
    update webhook_deliveries d set woken_at = clock_timestamp() from locked l where d.id = l.id
    returning d.id, d.created_at
  )
  select coalesce(array_agg(w.id order by w.created_at, w.id), '{}') into v_wake from woken w;
  return v_wake;
end
$$;
