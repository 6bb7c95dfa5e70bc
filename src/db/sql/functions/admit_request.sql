-- Admits an API request in one statement (src/domain/accounts/rate-limits.ts): the key's revocation, its rate-limit
-- windows, an inbound signature seen before (replay) and an Idempotency-Key.
create or replace function admit_request(p_key uuid, p_policy text, p_windows integer[], p_limits integer[], p_signature text, p_signature_ttl_seconds integer, p_idempotency_key text)
  returns table (outcome text, window_seconds integer, used integer, resets_at timestamp with time zone)
  language plpgsql
as $$
#variable_conflict use_column
declare
  v_now timestamptz := clock_timestamp();
  v_used int[];
  v_start timestamptz[];
  v_allowed boolean;
  v_recorded boolean := false;
begin
  perform 1 from api_keys k where k.id = p_key and k.revoked_at is null;
  if not found then
    return query select 'revoked'::text, null::int, null::int, null::timestamptz;
    return;
  end if;
  if p_signature is null then
    -- Counters alone need not wait for the disk: a database crash can forget the last moment's counts
    -- (a key may then get a few requests more), never a signature nor anything else.
    perform set_config('synchronous_commit', 'off', true);
  else
    delete from inbound_signatures s where s.api_key_id = p_key and s.expires_at < v_now;
    insert into inbound_signatures (api_key_id, signature, idempotency_key, expires_at)
      values (p_key, p_signature, p_idempotency_key, v_now + make_interval(secs => p_signature_ttl_seconds))
      on conflict do nothing;
    v_recorded := found;
    if not v_recorded then
      perform 1 from inbound_signatures s
        where s.api_key_id = p_key and s.signature = p_signature and s.idempotency_key = p_idempotency_key;
      if not found then
        return query select 'replayed'::text, null::int, null::int, null::timestamptz;
        return;
      end if;
    end if;
  end if;
  with w as (select w.s, w.n from unnest(p_windows) with ordinality as w(s, n)),
  counted as (
    insert into rate_limit_counters as c (api_key_id, policy, window_seconds, window_start, count)
    select p_key, p_policy, w.s, to_timestamp(floor(extract(epoch from v_now) / w.s) * w.s), 1 from w order by w.n
    on conflict on constraint rate_limit_counters_pkey do update
      set count = case when c.window_start = excluded.window_start then c.count + 1 else 1 end,
          window_start = excluded.window_start
    returning c.window_seconds, c.count, c.window_start)
  select array_agg(counted.count order by w.n), array_agg(counted.window_start order by w.n)
    into v_used, v_start
    from counted join w on w.s = counted.window_seconds;
  v_allowed := not exists (select 1 from unnest(v_used, p_limits) as t(u, l) where t.u > t.l);
  if not v_allowed then
    update rate_limit_counters c set count = c.count - 1
    where c.api_key_id = p_key and c.policy = p_policy and c.window_seconds = any (p_windows);
    select array_agg(t.u - 1 order by t.n) into v_used from unnest(v_used) with ordinality as t(u, n);
    if v_recorded then
      delete from inbound_signatures s where s.api_key_id = p_key and s.signature = p_signature;
    end if;
  end if;
  return query
    select case when v_allowed then 'allowed' else 'limited' end, p_windows[i], v_used[i], v_start[i] + make_interval(secs => p_windows[i])
    from generate_subscripts(p_windows, 1) as i;
end
$$;
