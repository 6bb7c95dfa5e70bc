import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 43: an event that waits in the outbox for a healthy endpoint's room (its other deliveries written) says which
 * endpoints it waits for (`waits_for`). The dispatcher claims a company's waiting events and its fresh ones (never claimed
 * for lack of room) in turns, so a new event for another endpoint is not kept out of the company's claims by a full
 * pipeline's backlog; and an endpoint that makes room wakes the dispatcher only when an event waits for it.
 */
export class Migration20261209000000OutboxWaits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "outbox_events" add column "waits_for" uuid[] null;`);
    this.addSql(
      `create index "outbox_events_fresh_company" on "outbox_events" ("company_id", "created_at", "id") where "dispatched_at" is null and "waits_for" is null;`,
    );
    this.addSql(
      `create index "outbox_events_waiting_company" on "outbox_events" ("company_id", "created_at", "id") where "dispatched_at" is null and "waits_for" is not null;`,
    );
    // Whether an endpoint has deferred deliveries not being started (new ones wait behind them), asked by the
    // dispatcher's claims and at every finished attempt. Read in the order of the partial index of deferred deliveries:
    // as a bare EXISTS the planner, counting thousands of dead endpoints' deferred rows, scanned the whole table for an
    // endpoint that has none.
    this.addSql(`create function endpoint_defers(p_endpoint uuid) returns boolean language sql stable as $$
      select exists (select 1 from (select 1 from webhook_deliveries d where d.endpoint_id = p_endpoint and d.deferred_since is not null
                       and (d.start_claimed_until is null or d.start_claimed_until < now()) order by d.created_at, d.id limit 1) deferring) $$;`);
    // As in Migration20261204000000EndpointRunBudget, outbox_room told only when an event waits for this endpoint.
    this.addSql(`create or replace function notify_endpoint_room(p_endpoint uuid) returns void language plpgsql as $$
      begin
        if endpoint_defers(p_endpoint) then
          perform pg_notify('endpoint_room', p_endpoint::text);
        end if;
        if exists (select 1 from webhook_endpoints e join outbox_events o on o.company_id = e.company_id and o.dispatched_at is null and o.waits_for is not null
                    where e.id = p_endpoint and p_endpoint = any(o.waits_for)) then
          perform pg_notify('outbox_room', p_endpoint::text);
        end if;
      end $$;`);
  }
}
