import type { SecretBox } from '../src/crypto/secret-box';
import type { Orm } from '../src/db/orm';
import type { Logger } from '../src/logger';
import type { WebhookSender } from '../src/webhooks/webhook-sender';

/** What activities are built from; tests pass real instances of each. */
export interface ActivityDeps {
  orm: Orm;
  logger: Logger;
  secretBox: SecretBox;
  /** The SSRF-guarded HTTPS client of outbound deliveries. */
  sender: WebhookSender;
  /** Where clients reach the API (PUBLIC_BASE_URL): download links in events point there. */
  publicBaseUrl: string;
}
