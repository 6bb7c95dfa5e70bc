-- Frees an attempt's slot and moves its endpoint's breaker by the attempt's verdict; returns the held deliveries to
-- wake (src/delivery/endpoints/endpoint-admission.ts).
create or replace function settle_delivery_attempt(p_endpoint uuid, p_delivery uuid, p_attempt_number integer, p_verdict text, p_failure_threshold integer, p_cooldown_ms integer, p_max_cooldown_ms integer, p_max_in_flight integer)
  returns table (transition text, wake uuid[])
  language plpgsql
as $$
declare
  v_state text;
  v_failing int;
  v_appended int;
  v_failed_probes int;
  v_probe_delivery uuid;
  v_probe_failed boolean;
begin
  select e.circuit_state, cardinality(e.circuit_failing_deliveries), e.circuit_failed_probes, e.circuit_probe_delivery_id
    into v_state, v_failing, v_failed_probes, v_probe_delivery
    from webhook_endpoints e where e.id = p_endpoint for update;
  delete from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and (s.delivery_id = p_delivery or s.expires_at <= clock_timestamp());
  if v_state is null then
    wake := '{}';
    return next;
    return;
  end if;

  if p_verdict = 'healthy' then
    if v_state <> 'closed' then
      transition := 'closed';
    end if;
    if v_state <> 'closed' or v_failing > 0 then
      update webhook_endpoints set circuit_state = 'closed', circuit_failing_deliveries = '{}', circuit_failed_probes = 0, circuit_opened_at = null,
          circuit_probe_at = null, circuit_probe_delivery_id = null
        where id = p_endpoint;
    end if;
    v_state := 'closed';
  elsif p_verdict = 'failing' then
    -- A delivery counts once its retry failed too: a receiver that turns away first attempts (warming up, a
    -- deploy) and takes the retries is not down.
    if p_attempt_number > 0 then
      update webhook_endpoints set circuit_failing_deliveries = circuit_failing_deliveries || p_delivery
        where id = p_endpoint and not (p_delivery = any(circuit_failing_deliveries)) and cardinality(circuit_failing_deliveries) < p_failure_threshold
        returning cardinality(circuit_failing_deliveries) into v_failing;
      if not found then
        select cardinality(e.circuit_failing_deliveries) into v_failing from webhook_endpoints e where e.id = p_endpoint;
      end if;
    end if;
    v_probe_failed := v_state = 'half_open' and v_probe_delivery = p_delivery;
    if v_probe_failed or (v_state = 'closed' and v_failing >= p_failure_threshold) then
      if v_probe_failed then
        v_failed_probes := v_failed_probes + 1;
        transition := 'reopened';
      else
        v_failed_probes := 0;
        transition := 'opened';
      end if;
      v_state := 'open';
      update webhook_endpoints set circuit_state = 'open', circuit_failed_probes = v_failed_probes, circuit_probe_delivery_id = null,
          circuit_opened_at = coalesce(circuit_opened_at, clock_timestamp()),
          circuit_probe_at = clock_timestamp() + least(p_max_cooldown_ms, p_cooldown_ms * 2 ^ least(v_failed_probes, 30)) * interval '1 millisecond'
        where id = p_endpoint;
      -- Those held for a slot now wait for the breaker: what /metrics and the console count them as.
      if transition = 'opened' then
        update webhook_deliveries d set held_reason = 'circuit_open' where d.endpoint_id = p_endpoint and d.held_until is not null and d.held_reason is distinct from 'awaiting_predecessor';
      end if;
    end if;
  end if;

  if v_state = 'closed' then
    wake := held_to_wake(p_endpoint, p_max_in_flight);
  elsif transition is not null then
    -- Just opened: the oldest held alone, which waits for the probe time and makes the probe (a run being started
    -- asks for itself: held_to_wake says why it is not woken).
    select coalesce(array_agg(d.id), '{}') into wake from (
      select d.id from webhook_deliveries d where d.endpoint_id = p_endpoint and d.held_until is not null and d.held_reason is distinct from 'awaiting_predecessor'
         and (d.start_claimed_until is null or d.start_claimed_until <= clock_timestamp())
       order by d.created_at, d.id limit 1) d;
  else
    wake := '{}';
  end if;
  return next;
end
$$;
