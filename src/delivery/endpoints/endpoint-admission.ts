import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config';
import type { DeliveryWorkflows } from '../delivery-workflows';
import type { HoldReason } from '../../../workflows/webhook-delivery.contract';

/**
 * Whether an attempt to an endpoint may go out now: one endpoint's trouble must not take the capacity every other
 * endpoint shares (worker slots, sockets). Two bounds, kept in PostgreSQL so every worker replica enforces them
 * together, each decided under a lock of the endpoint's row:
 *
 * - At most `maxInFlight` attempts in flight per endpoint: each holds a row in webhook_endpoint_slots until it
 *   finishes (or its lease runs out, when a worker died mid-attempt).
 * - A circuit breaker: when `failureThreshold` different deliveries have each failed a retry too, with no success
 *   between (timeouts, connection errors, 5xx), it opens; while open no attempt goes out; after the cool-down one probe attempt goes, and its outcome closes the breaker or
 *   opens it again for twice the cool-down (up to `maxCooldownMs`).
 *
 * An attempt that may not go is held: the activity answers at once (no worker slot is kept) and the run waits on a
 * durable timer, or until it is woken when capacity frees. Held deliveries are let through oldest first.
 */
export type AdmissionSettings = Config['webhooks']['admission'];

export type Admission = { admitted: true } | { admitted: false; reason: HoldReason; retryInMs: number };

/** What an attempt's outcome says about the endpoint, for its breaker. */
export type EndpointVerdict = 'healthy' | 'failing' | 'neutral';

/** What settling an attempt changed: the breaker's move, if any, and the held deliveries to wake. */
export interface Settlement {
  transition: 'opened' | 'reopened' | 'closed' | null;
  wake: string[];
}

/**
 * A held run looks again after about this long even when nobody wakes it (a wake-up lost to a crash between commit
 * and signal); wake-ups, not this, release held deliveries in the normal course. Long, and spread by up to half as
 * much again, because every look is work for the worker: ten thousand held runs looking every 5 minutes, all at once,
 * kept a worker busy with nothing else (docs/benchmarks.md, phase 9).
 */
export const HELD_RECHECK_MS = 30 * 60_000;
/** A held delivery whose run has not looked again this long after it should have is no longer waited for (its run was terminated). */
const HELD_GRACE = "interval '1 minute'";
/** A breaker as a new endpoint's: closed, nothing counted against it. */
const CLOSED_CIRCUIT =
  "circuit_state = 'closed', circuit_failing_deliveries = '{}', circuit_failed_probes = 0, circuit_opened_at = null, circuit_probe_at = null, circuit_probe_delivery_id = null";

/**
 * Admits the delivery's next attempt (taking a slot) or holds it (marking the delivery held, oldest first), in one
 * statement (src/db/sql/functions/admit_delivery_attempt.sql): the endpoint's row
 * locked first, then its slots, breaker and held deliveries counted. A delivery that holds a slot already (its activity
 * is retried after a worker died) is admitted again. An attempt's own path asks within begin_delivery_attempt
 * (src/delivery/attempts/attempt.ts).
 */
export async function admitAttempt(em: EntityManager, settings: AdmissionSettings, endpointId: string, deliveryId: string): Promise<Admission> {
  const [row] = await em.execute<{ admitted: boolean; reason: HoldReason | null; retry_in_ms: number | null }[]>(
    'select * from admit_delivery_attempt(?, ?, ?, ?, ?)',
    [endpointId, deliveryId, settings.maxInFlight, settings.slotLeaseMs, HELD_RECHECK_MS],
  );
  return row!.admitted ? { admitted: true } : { admitted: false, reason: row!.reason!, retryInMs: row!.retry_in_ms! };
}

/**
 * Frees the attempt's slot and moves the breaker by the attempt's verdict (settle_delivery_attempt), in the caller's
 * transaction. Returns the held deliveries to wake: once the breaker is closed, the oldest, as many as there are free
 * slots; when it has just opened, the oldest alone, which waits for the probe time and makes the probe. A delivery
 * counts against the breaker once its retry failed too: a receiver that turns away first attempts (warming up, a
 * deploy) and takes the retries is not down.
 */
export async function settleAttempt(
  em: EntityManager,
  settings: AdmissionSettings,
  endpointId: string,
  attempt: { deliveryId: string; attemptNumber: number },
  verdict: EndpointVerdict,
): Promise<Settlement> {
  const [row] = await em.execute<{ transition: Settlement['transition']; wake: string[] }[]>('select * from settle_delivery_attempt(?, ?, ?, ?, ?, ?, ?, ?)', [
    endpointId,
    attempt.deliveryId,
    attempt.attemptNumber,
    verdict,
    settings.failureThreshold,
    settings.cooldownMs,
    settings.maxCooldownMs,
    settings.maxInFlight,
  ]);
  return { transition: row!.transition, wake: row!.wake };
}

/** The oldest held deliveries of the endpoint, `limit` of them, late ones included. */
async function oldestHeld(em: EntityManager, endpointId: string, limit: number): Promise<string[]> {
  if (limit <= 0) return [];
  const rows = await em.execute<{ id: string }[]>(`select id from webhook_deliveries where endpoint_id = ? and held_until is not null order by created_at, id limit ?`, [
    endpointId,
    limit,
  ]);
  return rows.map((r) => r.id);
}

/**
 * Wakes the runs of these held deliveries. A delivery whose run is gone (terminated by hand) is no longer held, and
 * the next oldest is woken in its place, so the endpoint's queue does not stall on it. Call after the change that
 * frees them has committed.
 */
export async function wakeHeld(em: EntityManager, deliveryWorkflows: DeliveryWorkflows, endpointId: string, deliveryIds: string[]): Promise<void> {
  const woken = new Set<string>();
  let batch = deliveryIds;
  for (let round = 0; round < 3 && batch.length > 0; round++) {
    const gone = await deliveryWorkflows.wake(batch);
    for (const id of batch) woken.add(id);
    if (gone.length === 0) return;
    for (const id of gone) await clearHold(em, id);
    batch = (await oldestHeld(em, endpointId, woken.size + gone.length)).filter((id) => !woken.has(id)).slice(0, gone.length);
  }
}

/**
 * The oldest held deliveries of the endpoint, as many as it has free slots of `maxInFlight` not kept for deliveries woken
 * a moment ago, marked woken (src/db/sql/functions/held_to_wake.sql).
 */
async function heldToWake(em: EntityManager, endpointId: string, maxInFlight: number): Promise<string[]> {
  const [row] = await em.execute<{ wake: string[] }[]>('select held_to_wake(?, ?) as wake', [endpointId, maxInFlight]);
  return row!.wake;
}

/**
 * An operator closes the breaker by hand: attempts go out again at once, the held deliveries are woken oldest first.
 * Returns them, for the caller to wake.
 */
export async function closeCircuit(em: EntityManager, settings: AdmissionSettings, endpointId: string): Promise<string[]> {
  return em.transactional(async (tx) => {
    await tx.execute(`update webhook_endpoints set ${CLOSED_CIRCUIT} where id = ?`, [endpointId]);
    // The dispatchers start the endpoint's deferred deliveries, as it makes room.
    await tx.execute('select notify_endpoint_room(?)', [endpointId]);
    return heldToWake(tx, endpointId, settings.maxInFlight);
  });
}

/**
 * The endpoint's held deliveries, oldest first: every one (it was disabled: each fails at once instead of waiting), or
 * those that wait for `reason`.
 */
export async function allHeld(em: EntityManager, endpointId: string, reason?: HoldReason): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(
    `select id from webhook_deliveries where endpoint_id = ? and held_until is not null and (?::text is null or held_reason = ?) order by created_at, id`,
    [endpointId, reason ?? null, reason ?? null],
  );
  return rows.map((r) => r.id);
}

/** How many of the endpoint's deliveries wait for it now: runs it holds, and deliveries deferred without a run. */
export async function heldCount(em: EntityManager, endpointId: string): Promise<number> {
  const [row] = await em.execute<{ count: string }[]>(
    `select count(*) as count from webhook_deliveries
      where endpoint_id = ? and (held_until > clock_timestamp() - ${HELD_GRACE} or deferred_since is not null)`,
    [endpointId],
  );
  return Number(row?.count ?? 0);
}

/** The run stopped waiting for good (delivered elsewhere, cancelled, failed): it no longer holds anyone back. */
export async function clearHold(em: EntityManager, deliveryId: string): Promise<void> {
  await em.execute('update webhook_deliveries set held_reason = null, held_until = null, woken_at = null, start_claimed_until = null where id = ? and held_until is not null', [
    deliveryId,
  ]);
}
