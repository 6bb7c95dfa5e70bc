-- Whether an endpoint has deferred deliveries not being started: new ones wait behind them.
create or replace function endpoint_defers(p_endpoint uuid)
  returns boolean
  language sql
  stable
as $$
select exists (select 1 from (select 1 from webhook_deliveries d where d.endpoint_id = p_endpoint and d.deferred_since is not null
                 and (d.start_claimed_until is null or d.start_claimed_until < now()) order by d.created_at, d.id limit 1) deferring)
$$;
