import { Migration } from '@mikro-orm/migrations';

/**
 * One statement admits a request: admit_request() confirms the API key is not revoked, records an inbound
 * signature (refusing a replay), and counts the request in every rate-limit window with one upsert, taking
 * the request back out of every window when one is over its limit. It replaces consume_rate_limit() (a
 * loop of one upsert per window) and the separate replay-guard statement, so an API process that knows the
 * key from its cache makes one round trip before the handler. Row locks are taken in the policy's window
 * order, as before, so concurrent callers across processes serialise without deadlocks. A request that only
 * counts commits without waiting for its WAL to reach the disk: a read (GET) then waits for no disk flush.
 *
 * Changes of api_keys (but the last-used time) are announced on the channel `api_keys` (the prefix), so API
 * processes drop a key from their cache at once.
 */
export class Migration20261125000000RequestAdmission extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create function admit_request(p_key uuid, p_policy text, p_windows int[], p_limits int[], p_signature text, p_signature_ttl_seconds int)
      returns table (outcome text, window_seconds int, used int, resets_at timestamptz)
      language plpgsql as $$
      #variable_conflict use_column
      declare
        v_now timestamptz := clock_timestamp();
        v_used int[];
        v_start timestamptz[];
        v_allowed boolean;
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
          delete from inbound_signatures s where s.api_key_id = p_key and s.seen_at < v_now - make_interval(secs => p_signature_ttl_seconds);
          insert into inbound_signatures (api_key_id, signature) values (p_key, p_signature) on conflict do nothing;
          if not found then
            return query select 'replayed'::text, null::int, null::int, null::timestamptz;
            return;
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
        end if;
        return query
          select case when v_allowed then 'allowed' else 'limited' end, p_windows[i], v_used[i], v_start[i] + make_interval(secs => p_windows[i])
          from generate_subscripts(p_windows, 1) as i;
      end $$;`);
    this.addSql('drop function consume_rate_limit(uuid, text, int[], int[]);');
    this.addSql(`create function notify_api_key_change() returns trigger language plpgsql as $$
      begin
        perform pg_notify('api_keys', old.prefix);
        return null;
      end $$;`);
    // Not on last_used_at, which requests move once a minute.
    this.addSql(`create trigger api_keys_notify after update of company_id, name, prefix, key_hash, scopes, signing_secret_sealed, revoked_at or delete
      on api_keys for each row execute function notify_api_key_change();`);
  }
}
