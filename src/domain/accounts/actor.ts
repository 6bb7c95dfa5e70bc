/** Who is making a change: the authenticated API key and its company. Recorded as origin of every event. */
export interface Actor {
  companyId: string;
  apiKeyId: string;
}

/** The authenticated caller of a request. */
export interface Principal extends Actor {
  apiKeyName: string;
  scopes: string[];
  /** Sealed inbound signing secret; opened only by the inbound endpoint. */
  signingSecretSealed: string;
}

/** Just the actor of a principal: what may be stored in events and workflow inputs (no secrets). */
export const actorOf = ({ companyId, apiKeyId }: Principal): Actor => ({ companyId, apiKeyId });
