import type { Config } from '../src/config';
import type { Orm } from '../src/db/orm';
import type { DeliveryAttempts } from '../src/delivery/attempts/attempt';
import type { Logger } from '../src/logger';
import type { DeliveryWorkflows } from '../src/delivery/delivery-workflows';

/** What activities are built from; tests pass real instances of each. */
export interface ActivityDeps {
  orm: Orm;
  logger: Logger;
  webhooks: Config['webhooks'];
  /** Delivery attempts (begun, sent through the SSRF-guarded HTTPS client, recorded); the worker waits for those handed off when it stops. */
  deliveryAttempts: DeliveryAttempts;
  /** Asks for the re-runs of a bulk recovery's deliveries, on the worker's task queue. */
  deliveryWorkflows: DeliveryWorkflows;
  /** Where clients reach the API (PUBLIC_BASE_URL): download links in events point there. */
  publicBaseUrl: string;
}
