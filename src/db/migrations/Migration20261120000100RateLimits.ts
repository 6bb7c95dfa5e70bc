import { Migration } from '@mikro-orm/migrations';

/**
 * Fixed-window request counters per API key, policy (rest | inbound) and window length, one row per window
 * that is reset when a new window starts, so the table never grows past three rows per key and policy.
 * consume_rate_limit() counts a request in every window at once, atomically: it upserts (taking the row
 * locks that serialise concurrent callers across API processes), and when any window is over its limit it
 * takes the request back out so rejected requests do not use up the budget.
 */
export class Migration20261120000100RateLimits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "rate_limit_counters" (
      "api_key_id" uuid not null references "api_keys" ("id") on delete cascade,
      "policy" text not null,
      "window_seconds" int not null,
      "window_start" timestamptz not null,
      "count" int not null,
      constraint "rate_limit_counters_pkey" primary key ("api_key_id", "policy", "window_seconds"));`);
    this.addSql(`create function consume_rate_limit(p_key uuid, p_policy text, p_windows int[], p_limits int[])
      returns table (window_seconds int, max_requests int, used int, resets_at timestamptz, allowed boolean)
      language plpgsql as $$
      declare
        v_now timestamptz := clock_timestamp();
        v_used int[] := '{}';
        v_start timestamptz[] := '{}';
        v_count int;
        v_window_start timestamptz;
        v_allowed boolean := true;
      begin
        for i in 1 .. array_length(p_windows, 1) loop
          insert into rate_limit_counters as c (api_key_id, policy, window_seconds, window_start, count)
          values (p_key, p_policy, p_windows[i],
                  to_timestamp(floor(extract(epoch from v_now) / p_windows[i]) * p_windows[i]), 1)
          on conflict on constraint rate_limit_counters_pkey do update
            set count = case when c.window_start = excluded.window_start then c.count + 1 else 1 end,
                window_start = excluded.window_start
          returning c.count, c.window_start into v_count, v_window_start;
          v_used := v_used || v_count;
          v_start := v_start || v_window_start;
          v_allowed := v_allowed and v_count <= p_limits[i];
        end loop;
        if not v_allowed then
          update rate_limit_counters c set count = c.count - 1
          where c.api_key_id = p_key and c.policy = p_policy and c.window_seconds = any (p_windows);
          select array_agg(u - 1 order by n) into v_used from unnest(v_used) with ordinality as t(u, n);
        end if;
        return query
          select p_windows[i], p_limits[i], v_used[i], v_start[i] + make_interval(secs => p_windows[i]), v_allowed
          from generate_subscripts(p_windows, 1) as i;
      end $$;`);
  }
}
