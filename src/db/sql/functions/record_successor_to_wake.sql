-- The record's next delivery to the same endpoint, when it waits for this one, which has just ended: marked woken, for
-- the caller to wake (docs/ordering.md).
create or replace function record_successor_to_wake(p_delivery uuid)
  returns uuid[]
  language plpgsql
as $$
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
end
$$;
