import type { EntityManager } from '@mikro-orm/postgresql';

/** How long a key's response is kept for replays (as Stripe does). */
export const IDEMPOTENCY_RETENTION_HOURS = 24;
/** A claim older than this is taken to belong to a request whose process died; a new request may take it over. */
const ABANDONED_AFTER_SECONDS = 60;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyClaim =
  | { state: 'claimed' }
  | { state: 'completed'; response: StoredResponse }
  | { state: 'in_progress' }
  | { state: 'mismatch' };

/**
 * Claims an Idempotency-Key of an API key for a request whose method, path and body hash to `fingerprint`:
 * the first request claims it; a later one with the same fingerprint gets the stored response (or learns the
 * first is still running), one with another fingerprint is a mismatch. Expired keys of the API key are
 * pruned here.
 */
export async function claimIdempotencyKey(em: EntityManager, apiKeyId: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
  const [claimed] = await em.execute<{ claimed: number }[]>(
    `with pruned as (
       delete from idempotency_keys where api_key_id = ? and created_at < now() - make_interval(hours => ?)
     )
     insert into idempotency_keys (api_key_id, key, fingerprint, locked_at) values (?, ?, ?, now())
     on conflict (api_key_id, key) do update set locked_at = now(), created_at = now()
       where idempotency_keys.fingerprint = excluded.fingerprint and idempotency_keys.status is null
         and idempotency_keys.locked_at < now() - make_interval(secs => ?)
     returning 1 as claimed`,
    [apiKeyId, IDEMPOTENCY_RETENTION_HOURS, apiKeyId, key, fingerprint, ABANDONED_AFTER_SECONDS],
  );
  if (claimed) return { state: 'claimed' };
  const [row] = await em.execute<{ fingerprint: string; status: number | null; headers: Record<string, string> | null; body: string | null }[]>(
    'select fingerprint, status, headers, body from idempotency_keys where api_key_id = ? and key = ?',
    [apiKeyId, key],
  );
  // Gone between the two statements (pruned): nothing to replay or protect; let the request run.
  if (!row) return { state: 'claimed' };
  if (row.fingerprint !== fingerprint) return { state: 'mismatch' };
  if (row.status === null) return { state: 'in_progress' };
  return { state: 'completed', response: { status: row.status, headers: row.headers ?? {}, body: row.body ?? '' } };
}

/** Stores the response of a claimed key, for replays. */
export async function completeIdempotencyKey(em: EntityManager, apiKeyId: string, key: string, response: StoredResponse): Promise<void> {
  await em.execute('update idempotency_keys set status = ?, headers = ?::jsonb, body = ?, locked_at = null where api_key_id = ? and key = ?', [
    response.status,
    JSON.stringify(response.headers),
    response.body,
    apiKeyId,
    key,
  ]);
}

/** Gives a claimed key back (the request failed), so a retry with it runs again. */
export async function releaseIdempotencyKey(em: EntityManager, apiKeyId: string, key: string): Promise<void> {
  await em.execute('delete from idempotency_keys where api_key_id = ? and key = ? and status is null', [apiKeyId, key]);
}
