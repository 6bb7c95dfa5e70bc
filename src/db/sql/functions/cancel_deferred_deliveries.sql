-- Cancels the deferred deliveries of an endpoint that is no longer active, saying why.
create or replace function cancel_deferred_deliveries(p_endpoint uuid)
  returns integer
  language plpgsql
as $$
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
end
$$;
