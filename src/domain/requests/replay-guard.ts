import type { EntityManager } from '@mikro-orm/postgresql';
import { SIGNATURE_TOLERANCE_SECONDS } from '../../crypto/webhook-signature';

/**
 * Records a valid inbound signature; false when the key already sent it within the tolerance window (a
 * replayed request). A signature covers the timestamp, so an older copy is refused as stale anyway; rows
 * past twice the window are pruned here, per key.
 */
export async function firstUseOfSignature(em: EntityManager, apiKeyId: string, signature: string): Promise<boolean> {
  const [row] = await em.execute<{ inserted: number }[]>(
    `with pruned as (
       delete from inbound_signatures where api_key_id = ? and seen_at < now() - make_interval(secs => ?)
     )
     insert into inbound_signatures (api_key_id, signature) values (?, ?)
     on conflict do nothing
     returning 1 as inserted`,
    [apiKeyId, SIGNATURE_TOLERANCE_SECONDS * 2, apiKeyId, signature],
  );
  return row !== undefined;
}
