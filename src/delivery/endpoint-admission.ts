import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { DeliveryWorkflows } from '../temporal/delivery-workflows';
import type { CircuitState } from './webhook-endpoint.entity';
import type { HoldReason } from './webhook-delivery.entity';
import type { WebhookResult } from './webhook-sender';

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
const recheckMs = () => HELD_RECHECK_MS * (1 + Math.random() / 2);
/** A held delivery whose run has not looked again this long after it should have is no longer waited for (its run was terminated). */
const HELD_GRACE = "interval '1 minute'";
/** A breaker as a new endpoint's: closed, nothing counted against it. */
const CLOSED_CIRCUIT =
  "circuit_state = 'closed', circuit_failing_deliveries = '{}', circuit_failed_probes = 0, circuit_opened_at = null, circuit_probe_at = null, circuit_probe_delivery_id = null";

/** Timeouts, connection errors and 5xx count against the breaker; any other answer shows the endpoint is up. */
export function verdictOf(result: WebhookResult): EndpointVerdict {
  if (result.failureKind === null) return 'healthy';
  if (result.failureKind === 'timeout' || result.failureKind === 'connection') return 'failing';
  if (result.failureKind === 'http' && result.statusCode !== null) {
    if (result.statusCode >= 500) return 'failing';
    // A 429 asks to slow down (its Retry-After is honoured); it says nothing about whether the endpoint is up.
    return result.statusCode === 429 ? 'neutral' : 'healthy';
  }
  return 'neutral';
}

/** The cool-down after `failedProbes` failed probes: doubling, capped. */
export function cooldownMs(settings: AdmissionSettings, failedProbes: number): number {
  return Math.min(settings.maxCooldownMs, settings.cooldownMs * 2 ** Math.min(failedProbes, 30));
}

interface EndpointRow {
  circuit_state: CircuitState;
  circuit_probe_delivery_id: string | null;
  probe_in_ms: number | null;
  in_flight: number;
  holds_slot: boolean;
  probe_holds_slot: boolean;
  held_before: number;
  /** The delivery is marked held (its hold is cleared when it is admitted). */
  held: boolean;
}

const takeSlot = (em: EntityManager, endpointId: string, deliveryId: string, leaseMs: number) =>
  em.execute(
    `insert into webhook_endpoint_slots (endpoint_id, delivery_id, expires_at) values (?, ?, clock_timestamp() + ? * interval '1 millisecond')
     on conflict (endpoint_id, delivery_id) do update set expires_at = excluded.expires_at`,
    [endpointId, deliveryId, leaseMs],
  );

/**
 * Admits the delivery's next attempt (taking a slot) or holds it (marking the delivery held, oldest first). A
 * delivery that holds a slot already (its activity is retried after a worker died) is admitted again.
 */
export async function admitAttempt(em: EntityManager, settings: AdmissionSettings, endpointId: string, deliveryId: string): Promise<Admission> {
  return em.transactional(async (tx) => {
    // The lock first, in a statement of its own: the counts below must be read after it is granted (read committed
    // takes a statement's snapshot when the statement starts).
    await tx.execute('select 1 from webhook_endpoints where id = ? for update', [endpointId]);
    const [row] = await tx.execute<EndpointRow[]>(
      `select e.circuit_state, e.circuit_probe_delivery_id,
         (extract(epoch from e.circuit_probe_at - clock_timestamp()) * 1000)::float8 as probe_in_ms,
         (select count(*) from webhook_endpoint_slots s where s.endpoint_id = e.id and s.expires_at > clock_timestamp() and s.delivery_id <> ?)::int as in_flight,
         exists (select 1 from webhook_endpoint_slots s where s.endpoint_id = e.id and s.delivery_id = ? and s.expires_at > clock_timestamp()) as holds_slot,
         exists (select 1 from webhook_endpoint_slots s where s.endpoint_id = e.id and s.delivery_id = e.circuit_probe_delivery_id and s.expires_at > clock_timestamp()) as probe_holds_slot,
         (select count(*) from webhook_deliveries d
           where d.endpoint_id = e.id and d.held_until > clock_timestamp() - ${HELD_GRACE} and d.id <> ?
             and (d.created_at, d.id) < (select created_at, id from webhook_deliveries where id = ?))::int as held_before,
         coalesce((select held_until is not null from webhook_deliveries where id = ?), false) as held
       from webhook_endpoints e where e.id = ?`,
      [deliveryId, deliveryId, deliveryId, deliveryId, deliveryId, endpointId],
    );
    if (!row) throw new Error(`Webhook endpoint ${endpointId} does not exist`);

    const admit = async (): Promise<Admission> => {
      await takeSlot(tx, endpointId, deliveryId, settings.slotLeaseMs);
      // Most deliveries were never held: no statement for them.
      if (row.held) await clearHold(tx, deliveryId);
      return { admitted: true };
    };
    const hold = async (reason: HoldReason, retryInMs: number): Promise<Admission> => {
      const wait = Math.max(1_000, Math.ceil(retryInMs));
      await tx.execute(`update webhook_deliveries set held_reason = ?, held_until = clock_timestamp() + ? * interval '1 millisecond' where id = ?`, [reason, wait, deliveryId]);
      return { admitted: false, reason, retryInMs: wait };
    };

    if (row.holds_slot) return admit();
    // A half-open breaker whose probe died without settling is due for another probe.
    const probing = row.circuit_state === 'half_open' && row.probe_holds_slot;
    if (row.circuit_state === 'open' || (row.circuit_state === 'half_open' && !probing)) {
      const probeInMs = Math.max(0, row.probe_in_ms ?? 0);
      // Only the oldest held delivery waits for the probe time; it makes the probe, the rest are woken after it.
      if (row.held_before > 0) return hold('circuit_open', probeInMs + recheckMs());
      if (probeInMs > 0) return hold('circuit_open', probeInMs);
      await tx.execute(`update webhook_endpoints set circuit_state = 'half_open', circuit_probe_delivery_id = ? where id = ?`, [deliveryId, endpointId]);
      return admit();
    }
    if (probing) return hold('circuit_open', recheckMs());
    if (row.in_flight + row.held_before < settings.maxInFlight) return admit();
    return hold('endpoint_busy', recheckMs());
  });
}

/**
 * Frees the attempt's slot and moves the breaker by the attempt's verdict, in the caller's transaction (the one that
 * records the attempt). Returns the held deliveries to wake: once the breaker is closed, the oldest, as many as there
 * are free slots; when it has just opened, the oldest alone, which waits for the probe time and makes the probe.
 */
export async function settleAttempt(
  em: EntityManager,
  settings: AdmissionSettings,
  endpointId: string,
  attempt: { deliveryId: string; attemptNumber: number },
  verdict: EndpointVerdict,
): Promise<Settlement> {
  const { deliveryId } = attempt;
  const [endpoint] = await em.execute<{ circuit_state: CircuitState; failing: number; circuit_failed_probes: number; circuit_probe_delivery_id: string | null }[]>(
    `select circuit_state, cardinality(circuit_failing_deliveries) as failing, circuit_failed_probes, circuit_probe_delivery_id
       from webhook_endpoints where id = ? for update`,
    [endpointId],
  );
  await em.execute('delete from webhook_endpoint_slots where endpoint_id = ? and (delivery_id = ? or expires_at <= clock_timestamp())', [endpointId, deliveryId]);
  if (!endpoint) return { transition: null, wake: [] };

  let transition: Settlement['transition'] = null;
  let state = endpoint.circuit_state;
  if (verdict === 'healthy') {
    if (state !== 'closed') transition = 'closed';
    state = 'closed';
    await em.execute(
      `update webhook_endpoints set ${CLOSED_CIRCUIT} where id = ? and (circuit_state <> 'closed' or cardinality(circuit_failing_deliveries) > 0)`,
      [endpointId],
    );
  } else if (verdict === 'failing') {
    // A delivery counts once its retry failed too: a receiver that turns away first attempts (warming up, a deploy)
    // and takes the retries is not down.
    const [appended] =
      attempt.attemptNumber > 0
        ? await em.execute<{ failing: number }[]>(
            `update webhook_endpoints set circuit_failing_deliveries = circuit_failing_deliveries || ?::uuid
              where id = ? and not (?::uuid = any(circuit_failing_deliveries)) and cardinality(circuit_failing_deliveries) < ?
              returning cardinality(circuit_failing_deliveries) as failing`,
            [deliveryId, endpointId, deliveryId, settings.failureThreshold],
          )
        : [];
    const failing = appended?.failing ?? endpoint.failing;
    const probeFailed = state === 'half_open' && endpoint.circuit_probe_delivery_id === deliveryId;
    if (probeFailed || (state === 'closed' && failing >= settings.failureThreshold)) {
      const failedProbes = probeFailed ? endpoint.circuit_failed_probes + 1 : 0;
      transition = probeFailed ? 'reopened' : 'opened';
      state = 'open';
      await em.execute(
        `update webhook_endpoints set circuit_state = 'open', circuit_failed_probes = ?, circuit_probe_delivery_id = null,
           circuit_opened_at = coalesce(circuit_opened_at, clock_timestamp()), circuit_probe_at = clock_timestamp() + ? * interval '1 millisecond'
         where id = ?`,
        [failedProbes, cooldownMs(settings, failedProbes), endpointId],
      );
      // Those held for a slot now wait for the breaker: what /metrics and the console count them as.
      if (transition === 'opened') await em.execute(`update webhook_deliveries set held_reason = 'circuit_open' where endpoint_id = ? and held_until is not null`, [endpointId]);
    }
  }
  if (state === 'closed') return { transition, wake: await heldToWake(em, endpointId, settings.maxInFlight) };
  return { transition, wake: transition ? await oldestHeld(em, endpointId, 1) : [] };
}

/**
 * The oldest held deliveries of the endpoint, `limit` of them, late ones included: a run whose look is overdue (its
 * worker is behind) is woken like the others, and one that is gone is found out by the wake-up (wakeHeld).
 */
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

/** The oldest held deliveries of the endpoint, as many as it has free slots of `maxInFlight`, late ones included (as oldestHeld). */
async function heldToWake(em: EntityManager, endpointId: string, maxInFlight: number): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(
    `select id from webhook_deliveries where endpoint_id = ? and held_until is not null order by created_at, id
      limit greatest(0, ? - (select count(*) from webhook_endpoint_slots where endpoint_id = ? and expires_at > clock_timestamp()))`,
    [endpointId, maxInFlight, endpointId],
  );
  return rows.map((r) => r.id);
}

/**
 * An operator closes the breaker by hand: attempts go out again at once, the held deliveries are woken oldest first.
 * Returns them, for the caller to wake.
 */
export async function closeCircuit(em: EntityManager, settings: AdmissionSettings, endpointId: string): Promise<string[]> {
  return em.transactional(async (tx) => {
    await tx.execute(
      `update webhook_endpoints set ${CLOSED_CIRCUIT} where id = ?`,
      [endpointId],
    );
    return heldToWake(tx, endpointId, settings.maxInFlight);
  });
}

/** Every held delivery of the endpoint (it was disabled: each fails at once instead of waiting). */
export async function allHeld(em: EntityManager, endpointId: string): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(`select id from webhook_deliveries where endpoint_id = ? and held_until is not null order by created_at, id`, [endpointId]);
  return rows.map((r) => r.id);
}

/** How many of the endpoint's deliveries wait for it now. */
export async function heldCount(em: EntityManager, endpointId: string): Promise<number> {
  const [row] = await em.execute<{ count: string }[]>(
    `select count(*) as count from webhook_deliveries where endpoint_id = ? and held_until > clock_timestamp() - ${HELD_GRACE}`,
    [endpointId],
  );
  return Number(row?.count ?? 0);
}

/** The run stopped waiting for good (delivered elsewhere, cancelled, failed): it no longer holds anyone back. */
export async function clearHold(em: EntityManager, deliveryId: string): Promise<void> {
  await em.execute('update webhook_deliveries set held_reason = null, held_until = null where id = ? and held_until is not null', [deliveryId]);
}
