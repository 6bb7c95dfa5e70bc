import { condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { WebhookDeliveryActivities } from '../activities/webhook-delivery';
import type { AttemptTrigger } from '../src/domain/webhooks/delivery-attempt.entity';
import type { DeliveryStatus } from '../src/domain/webhooks/webhook-delivery.entity';
import { DELIVERY_STATUS } from '../src/temporal/search-attributes';
import { RERUN_SIGNAL_DESCRIPTION, rerunSignal } from './webhook-delivery-handlers';

/** The input of runs begun before DELIVERY_RUNS_PATCH. */
export interface LegacyWebhookDeliveryInput {
  deliveryId: string;
  /** Waits between automatic attempts (webhooks.md 6.3 by default); injected so tests run in seconds. */
  retryDelaysMs: number[];
  /** X-Webhook-Retry of the first attempt this run makes: 0, or the attempts made before a restart. */
  firstAttemptNumber: number;
  /** automatic: the whole schedule; manual (a re-run) and test: one attempt. */
  trigger: AttemptTrigger;
  /** How long a failed delivery waits for a re-run before the workflow closes (REST can still re-run it). */
  awaitRerunMs?: number;
}

interface LegacyWebhookDeliveryResult {
  status: Extract<DeliveryStatus, 'delivered' | 'failed'>;
  attempts: number;
}

const THIRTY_DAYS_MS = 30 * 24 * 3600 * 1000;

const { attemptDelivery, markDeliveryFailed } = proxyActivities<WebhookDeliveryActivities>({
  // One attempt is one HTTP exchange (≤ WEBHOOK_TIMEOUT_MS) plus bookkeeping; heartbeats during the exchange
  // let a new worker take over within seconds when the one making it dies.
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '10 seconds',
  // Bounded, but long enough (about an hour) to ride out a database or network outage without losing the
  // delivery; past that the run fails and an operator re-runs it (POST …/retry starts a new run).
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 60 },
});

const setStatus = (status: DeliveryStatus) => upsertSearchAttributes([{ key: DELIVERY_STATUS, value: status }]);

/**
 * The delivery workflow as it was before DELIVERY_RUNS_PATCH, unchanged, so that runs begun with it replay
 * (it waits up to 30 days for a re-run signal): attempts at the scheduled times until a 2xx, a 4xx, or the last
 * attempt; then the delivery is failed and waits for a re-run. Such runs stay open up to 30 days after the upgrade.
 */
export async function legacyWebhookDelivery(input: LegacyWebhookDeliveryInput): Promise<LegacyWebhookDeliveryResult> {
  let reruns = 0;
  setHandler(rerunSignal, () => void (reruns += 1), { description: RERUN_SIGNAL_DESCRIPTION });

  let attemptNumber = input.firstAttemptNumber;
  let trigger = input.trigger;
  let waits = trigger === 'automatic' ? input.retryDelaysMs : [];
  for (;;) {
    for (let i = 0; ; i++) {
      const nextAttemptInMs = i < waits.length ? waits[i]! : null;
      const { outcome } = await attemptDelivery({ deliveryId: input.deliveryId, attemptNumber, trigger, nextAttemptInMs });
      attemptNumber += 1;
      if (outcome === 'succeeded') {
        setStatus('delivered');
        return { status: 'delivered', attempts: attemptNumber };
      }
      if (outcome === 'permanent_failure' || nextAttemptInMs === null) break;
      setStatus('retrying');
      const rerunRequested = await condition(() => reruns > 0, nextAttemptInMs);
      if (rerunRequested) reruns -= 1;
      trigger = rerunRequested ? 'manual' : 'automatic';
    }

    const isTest = input.trigger === 'test';
    await markDeliveryFailed({ deliveryId: input.deliveryId, raiseAlert: !isTest });
    setStatus('failed');
    // A test send reports its one attempt and ends; a real delivery waits to be re-run.
    if (isTest || !(await condition(() => reruns > 0, input.awaitRerunMs ?? THIRTY_DAYS_MS))) {
      return { status: 'failed', attempts: attemptNumber };
    }
    reruns = 0;
    trigger = 'manual';
    waits = [];
  }
}
