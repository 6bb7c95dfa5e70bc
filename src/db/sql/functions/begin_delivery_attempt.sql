-- The first statement of a delivery attempt (src/delivery/attempts/attempt.ts): reads the delivery, its endpoint and its last
-- attempt, takes the endpoint's rate slot and asks its admission; a retry of an attempt already made is answered from
-- its record.
create or replace function begin_delivery_attempt(p_delivery uuid, p_attempt_id uuid, p_attempt_number integer, p_trigger text, p_trace_id text, p_take_rate_slot boolean, p_admit boolean, p_mark_in_progress boolean, p_expected_company uuid, p_expected_endpoint uuid, p_expected_event_type text, p_max_in_flight integer, p_slot_lease_ms integer, p_recheck_ms integer)
  returns table (company_id uuid, endpoint_id uuid, event_id uuid, event_type text, payload text, is_test boolean, status text, delivered_at timestamp with time zone, attempt_number integer, last_attempt_number integer, last_outcome text, last_status_code integer, last_error text, last_duration_ms integer, last_response_excerpt text, url text, endpoint_status text, disabled_reason text, secret_sealed text, previous_secret_sealed text, previous_secret_expires_at timestamp with time zone, endpoint_failing boolean, circuit_state text, auth_headers jsonb, oauth jsonb, client_certificate text, client_key_sealed text, throttled_for_ms integer, admitted boolean, held_reason text, held_for_ms integer, transformation jsonb, endpoint_updated_at text, transformed_payload text, transformed_headers jsonb, transformed_path text)
  language plpgsql
as $$
#variable_conflict use_column
declare
  v_max_per_second int;
  v_count int;
  v_ms_left float8;
  v_admission record;
begin
  select d.company_id, d.endpoint_id, d.event_id, d.event_type, d.payload, d.is_test, d.status, d.delivered_at,
         e.url, e.status, e.disabled_reason, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at,
         e.failing_since is not null, e.circuit_state, e.auth_headers, e.oauth, e.client_certificate, e.client_key_sealed, e.max_attempts_per_second,
         e.transformation, e.updated_at::text, d.transformed_payload, d.transformed_headers, d.transformed_path
    into company_id, endpoint_id, event_id, event_type, payload, is_test, status, delivered_at,
         url, endpoint_status, disabled_reason, secret_sealed, previous_secret_sealed, previous_secret_expires_at,
         endpoint_failing, circuit_state, auth_headers, oauth, client_certificate, client_key_sealed, v_max_per_second,
         transformation, endpoint_updated_at, transformed_payload, transformed_headers, transformed_path
    from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
   where d.id = p_delivery;
  if not found then
    return;
  end if;
  select a.attempt_number, a.outcome, a.status_code, a.error, a.duration_ms, a.response_excerpt
    into last_attempt_number, last_outcome, last_status_code, last_error, last_duration_ms, last_response_excerpt
    from webhook_delivery_attempts a where a.delivery_id = p_delivery order by a.attempt_number desc limit 1;
  attempt_number := coalesce(p_attempt_number, case when last_outcome = 'in_progress' then last_attempt_number else coalesce(last_attempt_number + 1, 0) end);
  if status = 'delivered' and p_attempt_number is null
     or company_id <> p_expected_company or endpoint_id <> p_expected_endpoint or event_type <> p_expected_event_type then
    return next;
    return;
  end if;
  -- The attempt was made already (this is a retry of its activity): answered from its record.
  if last_attempt_number = attempt_number and last_outcome <> 'in_progress' then
    return next;
    return;
  end if;

  if endpoint_status = 'active' and p_take_rate_slot and v_max_per_second is not null and last_attempt_number is distinct from attempt_number then
    insert into webhook_endpoint_send_windows as w (endpoint_id, window_start, count)
      values (endpoint_id, date_trunc('second', clock_timestamp()), 1)
      on conflict on constraint webhook_endpoint_send_windows_pkey do update
        set count = case when w.window_start = excluded.window_start then w.count + 1 else 1 end, window_start = excluded.window_start
      returning w.count, (extract(epoch from w.window_start + interval '1 second' - clock_timestamp()) * 1000)::float8 into v_count, v_ms_left;
    if v_count > v_max_per_second then
      throttled_for_ms := greatest(10, ceil(v_ms_left))::int;
      return next;
      return;
    end if;
  end if;

  -- A test send is how a subscriber checks a fixed endpoint: it goes out even past an open breaker.
  if endpoint_status = 'active' and not is_test then
    if p_admit then
      select * into v_admission from admit_delivery_attempt(endpoint_id, p_delivery, p_max_in_flight, p_slot_lease_ms, p_recheck_ms);
      admitted := v_admission.admitted;
      held_reason := v_admission.reason;
      held_for_ms := v_admission.retry_in_ms;
    end if;
  else
    update webhook_deliveries set held_reason = null, held_until = null, start_claimed_until = null where id = p_delivery and held_until is not null;
  end if;

  -- Visible as in progress while the request is out, and so never sent again by a second execution of the same attempt
  -- (its activity retried, or a run's first task done again) while this one may still be making it. A run's first
  -- attempt (no number asked) is made there and then unless its endpoint has been failing: it is then an activity of
  -- its own, which marks it.
  if p_mark_in_progress and admitted is distinct from false
     and (p_attempt_number is not null or is_test or endpoint_status <> 'active' or (not endpoint_failing and circuit_state = 'closed')) then
    insert into webhook_delivery_attempts (id, company_id, created_at, updated_at, delivery_id, attempt_number, trigger, trace_id)
      values (p_attempt_id, company_id, now(), now(), p_delivery, attempt_number, p_trigger, p_trace_id)
      on conflict on constraint webhook_delivery_attempts_number_unique do nothing;
    update webhook_deliveries set next_attempt_at = null, status = case when status = 'pending' then 'pending' else 'retrying' end, updated_at = now()
     where id = p_delivery;
  end if;
  return next;
end
$$;
