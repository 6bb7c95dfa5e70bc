-- Admits a delivery's next attempt (a slot of its endpoint taken) or holds it (the delivery marked held, oldest
-- first): the endpoint's row locked first, then its slots, breaker, held deliveries and, for an endpoint ordered per
-- record, the record's earlier deliveries counted (src/delivery/endpoints/endpoint-admission.ts, docs/ordering.md).
create or replace function admit_delivery_attempt(p_endpoint uuid, p_delivery uuid, p_max_in_flight integer, p_slot_lease_ms integer, p_recheck_ms integer)
  returns table (admitted boolean, reason text, retry_in_ms integer)
  language plpgsql
as $$
declare
  v_state text;
  v_probe_in_ms float8;
  v_probe_delivery uuid;
  v_in_flight int;
  v_holds_slot boolean;
  v_probe_holds_slot boolean;
  v_held_before int;
  v_held boolean;
  v_probing boolean;
  v_wait float8;
  -- A held run looks again after about this long when nobody wakes it, spread by up to half as much again.
  v_recheck float8 := p_recheck_ms * (1 + random() / 2);
  v_ordering text;
  v_company uuid;
  v_record_key text;
  v_record_seq bigint;
begin
  select e.circuit_state, e.circuit_probe_delivery_id, (extract(epoch from e.circuit_probe_at - clock_timestamp()) * 1000)::float8, e.ordering
    into v_state, v_probe_delivery, v_probe_in_ms, v_ordering
    from webhook_endpoints e where e.id = p_endpoint for update;
  if not found then
    raise exception 'Webhook endpoint % does not exist', p_endpoint;
  end if;
  select
    (select count(*) from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and s.expires_at > clock_timestamp() and s.delivery_id <> p_delivery)::int,
    exists (select 1 from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and s.delivery_id = p_delivery and s.expires_at > clock_timestamp()),
    exists (select 1 from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and s.delivery_id = v_probe_delivery and s.expires_at > clock_timestamp()),
    (select count(*) from webhook_deliveries d
      where d.endpoint_id = p_endpoint and d.held_until > clock_timestamp() - interval '1 minute' and d.id <> p_delivery and d.held_reason is distinct from 'awaiting_predecessor'
        and (d.created_at, d.id) < (select x.created_at, x.id from webhook_deliveries x where x.id = p_delivery))::int,
    coalesce((select x.held_until is not null from webhook_deliveries x where x.id = p_delivery), false)
    into v_in_flight, v_holds_slot, v_probe_holds_slot, v_held_before, v_held;

  v_probing := v_state = 'half_open' and v_probe_holds_slot;
  -- Ordered per record: a delivery not attempted yet waits while an earlier one of its record, to this endpoint, is
  -- neither delivered nor failed for good, or its event is not fanned out yet. Checked with the endpoint's row
  -- locked, as record_successor_to_wake looks for it: either that sees this one held, or this sees the earlier one
  -- finished.
  if v_ordering = 'per_record' and not v_holds_slot then
    select x.company_id, x.record_key, x.record_seq into v_company, v_record_key, v_record_seq from webhook_deliveries x where x.id = p_delivery;
    if v_record_seq is not null
       and not exists (select 1 from webhook_delivery_attempts a where a.delivery_id = p_delivery)
       and (exists (select 1 from webhook_deliveries p
                     where p.endpoint_id = p_endpoint and p.record_key = v_record_key and p.record_seq < v_record_seq
                       and p.status in ('pending', 'retrying') and not p.is_test)
            or exists (select 1 from outbox_events o
                        where o.company_id = v_company and o.record_key = v_record_key and o.record_seq < v_record_seq and o.dispatched_at is null)) then
      reason := 'awaiting_predecessor';
      v_wait := 300000 * (1 + random() / 2);
    end if;
  end if;
  if reason is null and not v_holds_slot then
    if v_state = 'open' or (v_state = 'half_open' and not v_probing) then
      v_probe_in_ms := greatest(0, coalesce(v_probe_in_ms, 0));
      -- Only the oldest held delivery waits for the probe time; it makes the probe, the rest are woken after it.
      if v_held_before > 0 then
        v_wait := v_probe_in_ms + v_recheck;
      elsif v_probe_in_ms > 0 then
        v_wait := v_probe_in_ms;
      else
        update webhook_endpoints set circuit_state = 'half_open', circuit_probe_delivery_id = p_delivery where id = p_endpoint;
      end if;
      if v_wait is not null then
        reason := 'circuit_open';
      end if;
    elsif v_probing then
      reason := 'circuit_open';
      v_wait := v_recheck;
    elsif v_in_flight + v_held_before >= p_max_in_flight then
      reason := 'endpoint_busy';
      v_wait := v_recheck;
    end if;
  end if;

  if reason is not null then
    retry_in_ms := greatest(1000, ceil(v_wait))::int;
    -- Held by its run, which now waits to be woken (a dispatcher's claim on its start, if any, is over).
    update webhook_deliveries set held_reason = reason, held_until = clock_timestamp() + retry_in_ms * interval '1 millisecond', woken_at = null,
        start_claimed_until = null
     where id = p_delivery;
    admitted := false;
    return next;
    return;
  end if;
  insert into webhook_endpoint_slots (endpoint_id, delivery_id, expires_at) values (p_endpoint, p_delivery, clock_timestamp() + p_slot_lease_ms * interval '1 millisecond')
    on conflict (endpoint_id, delivery_id) do update set expires_at = excluded.expires_at;
  -- Most deliveries were never held: no statement for them.
  if v_held then
    update webhook_deliveries set held_reason = null, held_until = null, woken_at = null, start_claimed_until = null where id = p_delivery;
    perform notify_endpoint_room(p_endpoint);
  end if;
  admitted := true;
  return next;
end
$$;
