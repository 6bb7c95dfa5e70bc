import { Migration } from '@mikro-orm/migrations';

/** How long a woken held delivery keeps a free slot of its endpoint for itself (held_to_wake). */
export const WAKE_RESERVATION = '5 seconds';

/**
 * Issue 43, isolation inside a company: an endpoint has a budget of runs, and its deliveries beyond it wait deferred,
 * without a run (src/delivery/outbox/endpoint-room.ts, docs/isolation.md "Inside a company"). Woken held deliveries are
 * reserved for a few seconds. Three functions of Migration20261203000000DeliveryEngine are replaced: admission and
 * the end of an attempt tell the dispatchers when an endpoint makes room, and settling wakes held deliveries through
 * held_to_wake.
 */
export class Migration20261204000000EndpointRunBudget extends Migration {
  override async up(): Promise<void> {
    // Deliveries that wait for room at their endpoint without a run yet (src/delivery/outbox/endpoint-room.ts), oldest
    // first per endpoint, and the lease of the dispatcher starting their runs.
    // And when a held delivery was last woken: a woken one keeps its place among the endpoint's free slots for a few
    // seconds, so the next finished attempt wakes the next held delivery instead of the same one again.
    this.addSql(`alter table "webhook_deliveries" add column "deferred_since" timestamptz null, add column "start_claimed_until" timestamptz null, add column "woken_at" timestamptz null;`);
    this.addSql(`create index "webhook_deliveries_endpoint_deferred_idx" on "webhook_deliveries" ("endpoint_id", "created_at", "id") where "deferred_since" is not null;`);
    // When an attempt took its endpoint's slot: one in flight for over a second says the endpoint hangs.
    this.addSql(`alter table "webhook_endpoint_slots" add column "taken_at" timestamptz not null default now();`);
    // Runs started and not begun, counted per company and per endpoint at every dispatch: the partial indexes hold just
    // them (not the thousands a dead endpoint may have deferred), and the few deferred ones whose runs are being started.
    this.addSql(`drop index "webhook_deliveries_company_unbegun_idx";`);
    this.addSql(
      `create index "webhook_deliveries_company_unbegun_idx" on "webhook_deliveries" ("company_id", "created_at") where "status" = 'pending' and "held_until" is null and not "is_test" and "deferred_since" is null;`,
    );
    this.addSql(
      `create index "webhook_deliveries_endpoint_unbegun_idx" on "webhook_deliveries" ("endpoint_id", "created_at") where "status" = 'pending' and "held_until" is null and not "is_test" and "deferred_since" is null;`,
    );
    this.addSql(`create index "webhook_deliveries_company_starting_idx" on "webhook_deliveries" ("company_id") where "start_claimed_until" is not null;`);
    this.addSql(`create index "webhook_deliveries_endpoint_starting_idx" on "webhook_deliveries" ("endpoint_id") where "start_claimed_until" is not null;`);

    // An endpoint deleted or disabled ends its deferred deliveries at once: cancelled (they can be re-run), saying why.
    this.addSql(`create function cancel_deferred_deliveries(p_endpoint uuid) returns int language plpgsql as $$
      declare
        v_cancelled int;
      begin
        update webhook_deliveries d
           set status = 'cancelled', deferred_since = null, start_claimed_until = null, updated_at = now(),
               last_error = 'the endpoint was ' || (select case when e.status = 'deleted' then 'deleted' else 'disabled' || coalesce(' (' || e.disabled_reason || ')', '') end
                                                      from webhook_endpoints e where e.id = p_endpoint)
                 || ' before this delivery was attempted; re-run it (or the endpoint''s failed and cancelled deliveries) once it takes deliveries again'
         where d.endpoint_id = p_endpoint and d.deferred_since is not null;
        get diagnostics v_cancelled = row_count;
        return v_cancelled;
      end $$;`);
    // Told when room may have come at an endpoint (a held delivery let through, an attempt finished): on endpoint_room
    // when it has deferred deliveries not being started, on outbox_room when its company has events waiting in the outbox (a healthy
    // endpoint's wait there for its free slots). The dispatchers listen.
    this.addSql(`create function notify_endpoint_room(p_endpoint uuid) returns void language plpgsql as $$
      begin
        if exists (select 1 from webhook_deliveries d where d.endpoint_id = p_endpoint and d.deferred_since is not null
                     and (d.start_claimed_until is null or d.start_claimed_until < now())) then
          perform pg_notify('endpoint_room', p_endpoint::text);
        end if;
        if exists (select 1 from webhook_endpoints e join outbox_events o on o.company_id = e.company_id and o.dispatched_at is null where e.id = p_endpoint) then
          perform pg_notify('outbox_room', p_endpoint::text);
        end if;
      end $$;`);

    // Admits the delivery's attempt (taking a slot of its endpoint) or holds it (marking the delivery held): the
    // endpoint's row locked first, then its slots, breaker and held deliveries counted.
    this.addSql(`create or replace function admit_delivery_attempt(p_endpoint uuid, p_delivery uuid, p_max_in_flight int, p_slot_lease_ms int, p_recheck_ms int)
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
          update webhook_deliveries set held_reason = reason, held_until = clock_timestamp() + retry_in_ms * interval '1 millisecond', woken_at = null where id = p_delivery;
          admitted := false;
          return next;
          return;
        end if;
        insert into webhook_endpoint_slots (endpoint_id, delivery_id, expires_at) values (p_endpoint, p_delivery, clock_timestamp() + p_slot_lease_ms * interval '1 millisecond')
          on conflict (endpoint_id, delivery_id) do update set expires_at = excluded.expires_at;
        -- Most deliveries were never held: no statement for them.
        if v_held then
          update webhook_deliveries set held_reason = null, held_until = null, woken_at = null where id = p_delivery;
          perform notify_endpoint_room(p_endpoint);
        end if;
        admitted := true;
        return next;
      end $$;`);

    // The held deliveries of an endpoint with a closed breaker to wake now, marked woken: the oldest not woken in the
    // last WAKE_RESERVATION, late ones included, as many as there are slots free and not kept for those woken in it.
    // A woken delivery comes for its slot within a workflow task; one that does not is woken again after it.
    this.addSql(`create function held_to_wake(p_endpoint uuid, p_max_in_flight int) returns uuid[] language plpgsql as $$
      declare
        v_wake uuid[];
      begin
        with held as (
          select d.id, d.created_at, d.woken_at > clock_timestamp() - interval '${WAKE_RESERVATION}' as reserving
            from webhook_deliveries d where d.endpoint_id = p_endpoint and d.held_until is not null
        ), woken as (
          update webhook_deliveries d set woken_at = clock_timestamp() from (
            select h.id from held h where not coalesce(h.reserving, false) order by h.created_at, h.id
             limit greatest(0, p_max_in_flight
               - (select count(*) from webhook_endpoint_slots s where s.endpoint_id = p_endpoint and s.expires_at > clock_timestamp())
               - (select count(*) from held h where h.reserving))
          ) picked where d.id = picked.id
          returning d.id, d.created_at
        )
        select coalesce(array_agg(w.id order by w.created_at, w.id), '{}') into v_wake from woken w;
        return v_wake;
      end $$;`);

    // Frees the attempt's slot and moves the breaker by the attempt's verdict; returns the held deliveries to wake.
    this.addSql(`create or replace function settle_delivery_attempt(p_endpoint uuid, p_delivery uuid, p_attempt_number int, p_verdict text,
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
          wake := held_to_wake(p_endpoint, p_max_in_flight);
        elsif transition is not null then
          -- Just opened: the oldest held alone, which waits for the probe time and makes the probe.
          select coalesce(array_agg(d.id), '{}') into wake from (
            select d.id from webhook_deliveries d where d.endpoint_id = p_endpoint and d.held_until is not null order by d.created_at, d.id limit 1) d;
        else
          wake := '{}';
        end if;
        return next;
      end $$;`);

    // After an attempt: its record written (a finished one is never rewritten), the delivery's state, the endpoint's
    // failing streak, the delivery's alerts resolved when delivered, and (for an active endpoint) its slot and breaker
    // settled. Returns the breaker's move, the held deliveries to wake, and how long the endpoint has been failing.
    // endpoint_ended: a retryable attempt whose endpoint was disabled or deleted while it was made, read once the
    // endpoint's row is locked, so that either this sees the change or the change's releaseWaiting sees the retry wait.
    this.addSql(`drop function finish_delivery_attempt(uuid, uuid, int, text, text, text, int, int, text, text, int, boolean, boolean, text, int, int, int, int);`);
    this.addSql(`create function finish_delivery_attempt(p_delivery uuid, p_attempt_id uuid, p_attempt_number int, p_trigger text, p_trace_id text,
        p_outcome text, p_status_code int, p_duration_ms int, p_error text, p_response_excerpt text, p_next_attempt_in_ms int,
        p_counts_against_endpoint boolean, p_settle boolean, p_verdict text,
        p_failure_threshold int, p_cooldown_ms int, p_max_cooldown_ms int, p_max_in_flight int)
      returns table (transition text, wake uuid[], failing_ms float8, endpoint_ended boolean)
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
        if v_retrying then
          select e.status <> 'active' into endpoint_ended from webhook_endpoints e where e.id = v_endpoint for share;
        end if;
        perform notify_endpoint_room(v_endpoint);
        return next;
      end $$;`);
  }
}
