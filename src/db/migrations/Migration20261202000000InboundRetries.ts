import { Migration } from '@mikro-orm/migrations';

/**
 * Inbound senders may resend a refused request as it is (issue 44). admit_request is as in
 * Migration20261201000000SignatureIdempotencyKey but for two things:
 * - A request refused for its rate (429) no longer keeps the signature it recorded: it was not processed, and the
 *   resend its Retry-After asks for must get through. (The api gives back the signature of a request that fails
 *   later with a 5xx itself.)
 * - Each signature is kept for the time its caller asks (`p_signature_ttl_seconds`: as long as any api host would
 *   still accept its timestamp), until its own `expires_at`. Before, every row was pruned at seen_at + the ttl of
 *   whichever request came next, so one time limit had to fit all, and it did not fit a timestamp signed ahead.
 * The previous release's api processes call the same function with a ttl of twice the tolerance, as they always
 * did. The six-argument one, left as it was for older processes, gets `expires_at` from the column's default (the
 * same 600 s) and still prunes by seen_at (through the primary key now): while such a process runs, it may drop a
 * record of a timestamp signed ahead up to a minute early.
 */
export class Migration20261202000000InboundRetries extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "inbound_signatures" add column "expires_at" timestamptz not null default (now() + interval '600 seconds');`);
    this.addSql(`create index "inbound_signatures_expiry_idx" on "inbound_signatures" ("api_key_id", "expires_at");`);
    this.addSql(`drop index "inbound_signatures_seen_idx";`);
    this.addSql(`create or replace function admit_request(p_key uuid, p_policy text, p_windows int[], p_limits int[], p_signature text, p_signature_ttl_seconds int, p_idempotency_key text)
      returns table (outcome text, window_seconds int, used int, resets_at timestamptz)
      language plpgsql as $$
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
      end $$;`);
  }
}
