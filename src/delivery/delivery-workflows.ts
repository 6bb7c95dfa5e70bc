import type { DeliveryRecoveryInput } from '../../workflows/delivery-recovery.contract';
import type { RerunRequest, RerunResult, WebhookDeliveryInput } from '../../workflows/webhook-delivery.contract';
import type { TraceContext } from '../observability/trace-context';

/** What a delivery's run is started with: its input, what its search attributes and summary name, and its trace. */
export interface DeliveryToStart {
  input: WebhookDeliveryInput;
  endpointUrl: string;
  eventId: string | null;
  /** The trace the delivery was made in: its run continues it, a re-run links to it; null when untraced. */
  trace: TraceContext | null;
}

/** How a re-run was asked for: an update to the open run (with the attempt it made when awaited), or a new run. */
export type RerunRequested = { via: 'update'; result: RerunResult | null } | { via: 'new_run' };

/** The open run refused the re-run (an attempt is being made right now); the message says why. */
export class RerunRefused extends Error {}

/**
 * What outbound delivery (src/delivery) asks of its workflows: src/temporal/temporal-delivery-workflows.ts does it
 * with Temporal. It stands beside WorkflowGateway because a delivery's run needs what no domain workflow does: search
 * attributes of its own, a retry of the run itself, and re-runs that race the run closing.
 */
export interface DeliveryWorkflows {
  /**
   * Starts the delivery's run, found in the Temporal UI by its company, endpoint, event and status. False when the
   * delivery's run was started before (a dispatcher re-running after a crash, or another replica).
   */
  start(delivery: DeliveryToStart): Promise<boolean>;
  /**
   * Asks for a re-run: the update "rerun" to the delivery's open run (waiting up to `waitMs` for the attempt it
   * makes; result null when it is still going), or a new run once it has closed, which makes one attempt numbered
   * after the recorded ones. An update the run refuses is thrown as RerunRefused.
   */
  requestRerun(delivery: DeliveryToStart, request: RerunRequest, waitMs: number): Promise<RerunRequested>;
  /** Whether the delivery's run closed within `ms` (delivered, or failed: its attempt is recorded either way). */
  closedWithin(deliveryId: string, ms: number): Promise<boolean>;
  /** Tells the runs of these held deliveries that their endpoint lets attempts through again; returns those with no open run. */
  wake(deliveryIds: string[]): Promise<string[]>;
  /** Tells the runs of these deliveries, waiting for their next retry, that their endpoint was disabled or deleted. */
  endpointEnded(deliveryIds: string[]): Promise<void>;
  /** Starts the run that re-runs a bulk recovery's deliveries (of the company's endpoint). */
  startRecovery(input: DeliveryRecoveryInput, companyId: string, summary: string): Promise<void>;
}
