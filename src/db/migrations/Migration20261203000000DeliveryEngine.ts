import { Migration } from '@mikro-orm/migrations';

/**
 * A delivery's attempt in two round trips to PostgreSQL (docs/benchmarks.md, "Delivery engine"): one before the
 * request (the delivery, its endpoint and its last attempt read; the endpoint's rate slot and admission taken) and one
 * after it (the attempt recorded, the delivery updated, the endpoint's health, alerts, slot and breaker settled). Each
 * is a function, so that its statements run one after another on the server with a fresh snapshot each (a lock first,
 * then the counts it guards, as src/delivery/endpoint-admission.ts describes), without a round trip between them.
 *
 * The outbox dispatcher claims events for a while (`claimed_until`) instead of holding their rows locked in a
 * transaction while it starts their workflows: the deliveries it writes are committed before their runs start, so a
 * run's first workflow task finds its delivery at once.
 */
export class Migration20261203000000DeliveryEngine extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "outbox_events" add column "claimed_until" timestamptz null;`);

    // Admits the delivery's attempt (taking a slot of its endpoint) or holds it (marking the delivery held): the
    // endpoint's row locked first, then its slots, breaker and held deliveries counted.
    this.addSql(`create function admit_delivery_attempt(p_endpoint uuid, p_delivery uuid, p_max_in_flight int, p_slot_lease_ms int, p_recheck_ms int)
      returns table (admitted boolean, reason text, retry_in_ms int)
      language plpgsql as $$
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
      begin
        select e.circuit_state, e.circuit_probe_delivery_id, (extract(epoch from e.circuit_probe_at - clock_timestamp()) * 1000)::float8
          into v_state, v_probe_delivery, v_probe_in_ms
          from webhook_endpoints e where e.id = p_endpoint for update;
        if not found then
          raise exception 'Webhook endpoint % does not exist', p_endpoint;
        end if;
        select
          (select count(*) from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and s.expires_at > clock_timestamp() and s.delivery_id <> p_delivery)::int,
          exists (select 1 from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and s.delivery_id = p_delivery and s.expires_at > clock_timestamp()),
          exists (select 1 from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and s.delivery_id = v_probe_delivery and s.expires_at > clock_timestamp()),
          (select count(*) from webhook_deliveries d
            where d.endpoint_id = p_endpoint and d.held_until > clock_timestamp() - interval '1 minute' and d.id <> p_delivery
              and (d.created_at, d.id) < (select x.created_at, x.id from webhook_deliveries x where x.id = p_delivery))::int,
          coalesce((select x.held_until is not null from webhook_deliveries x where x.id = p_delivery), false)
          into v_in_flight, v_holds_slot, v_probe_holds_slot, v_held_before, v_held;

        v_probing := v_state = 'half_open' and v_probe_holds_slot;
        if not v_holds_slot then
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
          update webhook_deliveries set held_reason = reason, held_until = clock_timestamp() + retry_in_ms * interval '1 millisecond' where id = p_delivery;
          admitted := false;
          return next;
          return;
        end if;
        insert into webhook_endpoint_slots (endpoint_id, delivery_id, expires_at) values (p_endpoint, p_delivery, clock_timestamp() + p_slot_lease_ms * interval '1 millisecond')
          on conflict (endpoint_id, delivery_id) do update set expires_at = excluded.expires_at;
        -- Most deliveries were never held: no statement for them.
        if v_held then
          update webhook_deliveries set held_reason = null, held_until = null where id = p_delivery;
        end if;
        admitted := true;
        return next;
      end $$;`);

    // Frees the attempt's slot and moves the breaker by the attempt's verdict; returns the held deliveries to wake.
    this.addSql(`create function settle_delivery_attempt(p_endpoint uuid, p_delivery uuid, p_attempt_number int, p_verdict text,
        p_failure_threshold int, p_cooldown_ms int, p_max_cooldown_ms int, p_max_in_flight int)
      returns table (transition text, wake uuid[])
      language plpgsql as $$
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
              update webhook_deliveries set held_reason = 'circuit_open' where endpoint_id = p_endpoint and held_until is not null;
            end if;
          end if;
        end if;

        if v_state = 'closed' then
          -- The oldest held, as many as there are free slots, late ones included.
          select coalesce(array_agg(h.id order by h.created_at, h.id), '{}') into wake from (
            select d.id, d.created_at from webhook_deliveries d where d.endpoint_id = p_endpoint and d.held_until is not null
             order by d.created_at, d.id
             limit greatest(0, p_max_in_flight - (select count(*) from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and s.expires_at > clock_timestamp()))) h;
        elsif transition is not null then
          -- Just opened: the oldest held alone, which waits for the probe time and makes the probe.
          select coalesce(array_agg(d.id), '{}') into wake from (
            select d.id from webhook_deliveries d where d.endpoint_id = p_endpoint and d.held_until is not null order by d.created_at, d.id limit 1) d;
        else
          wake := '{}';
        end if;
        return next;
      end $$;`);

    // Before an attempt: the delivery, its endpoint and its last attempt; the endpoint's rate slot and admission when
    // asked (a rate limit without a free slot answers throttled, and nothing is admitted); and, when asked, the
    // attempt recorded as in progress. p_attempt_number null: the next attempt (the last one again when it never
    // finished). Nothing is taken for a delivery delivered already or other than expected (the caller refuses it). No
    // row when the delivery does not exist.
    this.addSql(`create function begin_delivery_attempt(p_delivery uuid, p_attempt_id uuid, p_attempt_number int, p_trigger text, p_trace_id text,
        p_take_rate_slot boolean, p_admit boolean, p_mark_in_progress boolean,
        p_expected_company uuid, p_expected_endpoint uuid, p_expected_event_type text,
        p_max_in_flight int, p_slot_lease_ms int, p_recheck_ms int)
      returns table (
        company_id uuid, endpoint_id uuid, event_id uuid, event_type text, payload text, is_test boolean, status text, delivered_at timestamptz,
        attempt_number int, last_attempt_number int, last_outcome text, last_status_code int, last_error text, last_duration_ms int, last_response_excerpt text,
        url text, endpoint_status text, disabled_reason text, secret_sealed text, previous_secret_sealed text, previous_secret_expires_at timestamptz,
        endpoint_failing boolean, circuit_state text,
        throttled_for_ms int, admitted boolean, held_reason text, held_for_ms int)
      language plpgsql as $$
      #variable_conflict use_column
      declare
        v_max_per_second int;
        v_count int;
        v_ms_left float8;
        v_admission record;
      begin
        select d.company_id, d.endpoint_id, d.event_id, d.event_type, d.payload, d.is_test, d.status, d.delivered_at,
               e.url, e.status, e.disabled_reason, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at,
               e.failing_since is not null, e.circuit_state, e.max_attempts_per_second
          into company_id, endpoint_id, event_id, event_type, payload, is_test, status, delivered_at,
               url, endpoint_status, disabled_reason, secret_sealed, previous_secret_sealed, previous_secret_expires_at,
               endpoint_failing, circuit_state, v_max_per_second
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
          update webhook_deliveries set held_reason = null, held_until = null where id = p_delivery and held_until is not null;
        end if;

        if p_mark_in_progress and admitted is distinct from false then
          -- Visible as in progress while the request is out.
          insert into webhook_delivery_attempts (id, company_id, created_at, updated_at, delivery_id, attempt_number, trigger, trace_id)
            values (p_attempt_id, company_id, now(), now(), p_delivery, attempt_number, p_trigger, p_trace_id)
            on conflict on constraint webhook_delivery_attempts_number_unique do nothing;
          update webhook_deliveries set next_attempt_at = null, status = case when status = 'pending' then 'pending' else 'retrying' end, updated_at = now()
           where id = p_delivery;
        end if;
        return next;
      end $$;`);

    // After an attempt: its record written (a finished one is never rewritten), the delivery's state, the endpoint's
    // failing streak, the delivery's alerts resolved when delivered, and (for an active endpoint) its slot and breaker
    // settled. Returns the breaker's move, the held deliveries to wake, and how long the endpoint has been failing.
    this.addSql(`create function finish_delivery_attempt(p_delivery uuid, p_attempt_id uuid, p_attempt_number int, p_trigger text, p_trace_id text,
        p_outcome text, p_status_code int, p_duration_ms int, p_error text, p_response_excerpt text, p_next_attempt_in_ms int,
        p_counts_against_endpoint boolean, p_settle boolean, p_verdict text,
        p_failure_threshold int, p_cooldown_ms int, p_max_cooldown_ms int, p_max_in_flight int)
      returns table (transition text, wake uuid[], failing_ms float8)
      language plpgsql as $$
      #variable_conflict use_column
      declare
        v_company uuid;
        v_endpoint uuid;
        v_settlement record;
        v_retrying boolean := p_outcome = 'retryable_failure' and p_next_attempt_in_ms is not null;
      begin
        insert into webhook_delivery_attempts as a (id, company_id, created_at, updated_at, delivery_id, attempt_number, trigger, trace_id,
            outcome, status_code, duration_ms, error, response_excerpt, finished_at)
          select p_attempt_id, d.company_id, now(), now(), p_delivery, p_attempt_number, p_trigger, p_trace_id,
            p_outcome, p_status_code, p_duration_ms, p_error, p_response_excerpt, now()
            from webhook_deliveries d where d.id = p_delivery
          on conflict on constraint webhook_delivery_attempts_number_unique do update
            set outcome = excluded.outcome, status_code = excluded.status_code, duration_ms = excluded.duration_ms, error = excluded.error,
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
         returning d.company_id, d.endpoint_id into v_company, v_endpoint;
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
        return next;
      end $$;`);
  }
}
