import type { Config } from '../src/config';
import type { SecretBox } from '../src/crypto/secret-box';
import type { Orm } from '../src/db/orm';
import type { Logger } from '../src/logger';
import type { WorkerMetrics } from '../src/metrics';
import type { WebhookSender } from '../src/delivery/webhook-sender';
import type { DeliveryWorkflows } from '../src/temporal/delivery-workflows';

/** What activities are built from; tests pass real instances of each. */
export interface ActivityDeps {
  orm: Orm;
  logger: Logger;
  secretBox: SecretBox;
  /** The SSRF-guarded HTTPS client of outbound deliveries. */
  sender: WebhookSender;
  webhooks: Config['webhooks'];
  metrics: WorkerMetrics;
  /** Asks for the re-runs of a bulk recovery's deliveries, on the worker's task queue. */
  deliveryWorkflows: DeliveryWorkflows;
  /** Where clients reach the API (PUBLIC_BASE_URL): download links in events point there. */
  publicBaseUrl: string;
}
