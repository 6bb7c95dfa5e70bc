import { Migration } from '@mikro-orm/migrations';
import { WAKE_RESERVATION } from './Migration20261204000000EndpointRunBudget';

/** How long a delivery waiting for its record's earlier one looks again when nobody wakes it (admit_delivery_attempt). */
const PREDECESSOR_RECHECK_MS = 5 * 60_000;

/**
 * Issue 46, ordered delivery per record (docs/ordering.md): an endpoint with `ordering = 'per_record'` gets one record's
 * deliveries one at a time, in the order their changes committed.
 *
 * - An event names its record (`record_key`, src/events/record-keys.ts) and gets its place among the record's events
 *   (`record_seq`) from record_sequences when its transaction commits: a deferred trigger, so that the counter's row is
 *   locked last and held only until the commit, and a transaction that began first but committed later comes after.
 * - Deliveries carry both. admit_delivery_attempt holds a delivery not attempted yet (reason awaiting_predecessor)
 *   while an earlier one of its record to that endpoint is neither delivered nor failed for good; such a hold takes no
 *   slot and counts against no other delivery (held_to_wake, the breaker's holds and the dispatcher leave it out).
 * - A delivery that ends (delivered here, failed or cancelled by its run) wakes its record's next one:
 *   record_successor_to_wake.
 *
 * admit_delivery_attempt, held_to_wake and settle_delivery_attempt as Migration20261204000000EndpointRunBudget made
 * them, and finish_delivery_attempt, with those changes.
 */
export class Migration20261206000000OrderedDelivery extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add column "ordering" text not null default 'none';`);
    this.addSql(`alter table "outbox_events" add column "record_key" text null, add column "record_seq" bigint null;`);
    this.addSql(`alter table "webhook_deliveries" add column "record_key" text null, add column "record_seq" bigint null;`);
    // The earlier deliveries of a record to an endpoint that are not final yet, and the record's events not fanned out.
    this.addSql(
      `create index "webhook_deliveries_record_order_idx" on "webhook_deliveries" ("endpoint_id", "record_key", "record_seq") where "record_key" is not null and "status" in ('pending', 'retrying');`,
    );
    this.addSql(
      `create index "outbox_events_undispatched_record_idx" on "outbox_events" ("company_id", "record_key", "record_seq") where "record_key" is not null and "dispatched_at" is null;`,
    );

    this.addSql(`create table "record_sequences" ("company_id" uuid not null, "record_key" text not null, "last_seq" bigint not null,
      constraint "record_sequences_pkey" primary key ("company_id", "record_key"));`);
    this.addSql(`alter table "record_sequences" add constraint "record_sequences_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`create function assign_record_seq() returns trigger language plpgsql as $$
      declare
        v_seq bigint;
      begin
        insert into record_sequences as r (company_id, record_key, last_seq) values (new.company_id, new.record_key, 1)
          on conflict (company_id, record_key) do update set last_seq = r.last_seq + 1
          returning r.last_seq into v_seq;
        update outbox_events set record_seq = v_seq where id = new.id;
        return null;
      end $$;`);
    this.addSql(`create constraint trigger "outbox_events_record_seq" after insert on "outbox_events" deferrable initially deferred
      for each row when (new.record_key is not null) execute function assign_record_seq();`);

    // The record's next delivery to the endpoint of this one, which has just ended, when it waits for it: marked woken,
    // for the caller to wake. Under the endpoint's row lock, as admit_delivery_attempt holds one.
    this.addSql(`create function record_successor_to_wake(p_delivery uuid) returns uuid[] language plpgsql as $$
      declare
        v_endpoint uuid;
        v_record_key text;
        v_ordering text;
        v_next record;
      begin
        select d.endpoint_id, d.record_key into v_endpoint, v_record_key from webhook_deliveries d where d.id = p_delivery;
        select e.ordering into v_ordering from webhook_endpoints e where e.id = v_endpoint;
        if v_record_key is null or v_ordering is distinct from 'per_record' then
          return '{}';
        end if;
        perform 1 from webhook_endpoints e where e.id = v_endpoint for update;
        select d.id, d.held_reason into v_next from webhook_deliveries d
         where d.endpoint_id = v_endpoint and d.record_key = v_record_key and d.status in ('pending', 'retrying') and not d.is_test and d.record_seq is not null
         order by d.record_seq limit 1;
        if v_next.held_reason is distinct from 'awaiting_predecessor' then
          return '{}';
        end if;
        update webhook_deliveries set woken_at = clock_timestamp() where id = v_next.id;
        return array[v_next.id];
      end $$;`);

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
            v_wait := ${PREDECESSOR_RECHECK_MS} * (1 + random() / 2);
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

    this.addSql(`create or replace function held_to_wake(p_endpoint uuid, p_max_in_flight int) returns uuid[] language plpgsql as $$
      declare
        v_wake uuid[];
      begin
        with held as (
          select d.id, d.created_at, d.woken_at > clock_timestamp() - interval '${WAKE_RESERVATION}' as reserving
            from webhook_deliveries d where d.endpoint_id = p_endpoint and d.held_until is not null and d.held_reason is distinct from 'awaiting_predecessor'
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
              update webhook_deliveries d set held_reason = 'circuit_open' where d.endpoint_id = p_endpoint and d.held_until is not null and d.held_reason is distinct from 'awaiting_predecessor';
            end if;
          end if;
        end if;

        if v_state = 'closed' then
          wake := held_to_wake(p_endpoint, p_max_in_flight);
        elsif transition is not null then
          -- Just opened: the oldest held alone, which waits for the probe time and makes the probe.
          select coalesce(array_agg(d.id), '{}') into wake from (
            select d.id from webhook_deliveries d where d.endpoint_id = p_endpoint and d.held_until is not null and d.held_reason is distinct from 'awaiting_predecessor'
             order by d.created_at, d.id limit 1) d;
        else
          wake := '{}';
        end if;
        return next;
      end $$;`);

    this.addSql(`create or replace function finish_delivery_attempt(p_delivery uuid, p_attempt_id uuid, p_attempt_number int, p_trigger text, p_trace_id text,
        p_outcome text, p_status_code int, p_duration_ms int, p_error text, p_response_excerpt text, p_next_attempt_in_ms int,
        p_counts_against_endpoint boolean, p_settle boolean, p_verdict text,
        p_failure_threshold int, p_cooldown_ms int, p_max_cooldown_ms int, p_max_in_flight int)
      returns table (transition text, wake uuid[], failing_ms float8, endpoint_ended boolean)
      language plpgsql as $$
      #variable_conflict use_column
      declare
        v_company uuid;
        v_endpoint uuid;
        v_record_key text;
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
      end $$;`);
  }
}
