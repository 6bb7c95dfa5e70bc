-- The last statement of a delivery attempt (src/delivery/attempts/attempt.ts): records the attempt and the delivery's state,
-- the endpoint's failing streak, resolves the delivery's alerts once delivered, frees its slot and moves the breaker
-- (settle_delivery_attempt); names the held deliveries to wake (and, once delivered, its record's next delivery).
create or replace function finish_delivery_attempt(p_delivery uuid, p_attempt_id uuid, p_attempt_number integer, p_trigger text, p_trace_id text, p_outcome text, p_status_code integer, p_duration_ms integer, p_error text, p_response_excerpt text, p_next_attempt_in_ms integer, p_counts_against_endpoint boolean, p_settle boolean, p_verdict text, p_failure_threshold integer, p_cooldown_ms integer, p_max_cooldown_ms integer, p_max_in_flight integer)
  returns table (transition text, wake uuid[], failing_ms double precision, endpoint_ended boolean)
  language plpgsql
as $$
#variable_conflict use_column
declare
  v_company uuid;
  v_endpoint uuid;
  v_record_key text;
  v_settlement record;
  v_retrying boolean := p_outcome = 'retryable_failure' and p_next_attempt_in_ms is not null;
begin
  -- The engine's lock order (src/delivery/README.md): the endpoint's row before its deliveries' rows, as an admission
  -- takes them; taken the other way round, a finish and an admission could each wait for the other's row.
  select d.endpoint_id into v_endpoint from webhook_deliveries d where d.id = p_delivery;
  if v_endpoint is null then
    return;
  end if;
  perform 1 from webhook_endpoints e where e.id = v_endpoint for update;
  insert into webhook_delivery_attempts as a (id, company_id, created_at, updated_at, delivery_id, attempt_number, trigger, trace_id,
      outcome, status_code, duration_ms, error, response_excerpt, finished_at)
    select p_attempt_id, d.company_id, now(), now(), p_delivery, p_attempt_number, p_trigger, p_trace_id,
      p_outcome, p_status_code, p_duration_ms, p_error, p_response_excerpt, now()
      from webhook_deliveries d where d.id = p_delivery
    -- Begun in progress: a run's first attempt began before its plan said why it is made (automatic, manual or test).
    on conflict on constraint webhook_delivery_attempts_number_unique do update
      set trigger = excluded.trigger, outcome = excluded.outcome, status_code = excluded.status_code, duration_ms = excluded.duration_ms, error = excluded.error,
          response_excerpt = excluded.response_excerpt, finished_at = excluded.finished_at, updated_at = now()
      where a.outcome = 'in_progress';
  update webhook_deliveries d
     set attempt_count = greatest(d.attempt_count, p_attempt_number + 1), last_attempt_at = now(), last_status_code = p_status_code, last_error = p_error,
         next_attempt_at = case when v_retrying then now() + p_next_attempt_in_ms * interval '1 millisecond' end,
         status = case when p_outcome = 'succeeded' then 'delivered' when v_retrying then 'retrying' else d.status end,
         delivered_at = case when p_outcome = 'succeeded' then now() else d.delivered_at end,
         failed_at = case when p_outcome = 'succeeded' then null else d.failed_at end,
         updated_at = now()
   where d.id = p_delivery
   returning d.company_id, d.endpoint_id, d.record_key into v_company, v_endpoint, v_record_key;
  if v_endpoint is null then
    return;
  end if;

  if p_outcome = 'succeeded' then
    update webhook_endpoints set failing_since = null where id = v_endpoint and failing_since is not null;
    update webhook_alerts set resolved_at = now() where delivery_id = p_delivery and resolved_at is null;
  elsif p_counts_against_endpoint then
    update webhook_endpoints set failing_since = coalesce(failing_since, now()) where id = v_endpoint
      returning (extract(epoch from now() - failing_since) * 1000)::float8 into failing_ms;
  end if;

  if p_settle then
    select * into v_settlement from settle_delivery_attempt(v_endpoint, p_delivery, p_attempt_number, p_verdict,
      p_failure_threshold, p_cooldown_ms, p_max_cooldown_ms, p_max_in_flight);
    transition := v_settlement.transition;
    wake := v_settlement.wake;
  else
    wake := '{}';
  end if;
  if p_outcome = 'succeeded' and v_record_key is not null then
    wake := wake || record_successor_to_wake(p_delivery);
  end if;
  if v_retrying then
    select e.status <> 'active' into endpoint_ended from webhook_endpoints e where e.id = v_endpoint for share;
  end if;
  perform notify_endpoint_room(v_endpoint);
  return next;
end
$$;
