import { Entity, Index, type Opt, Property } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';

/**
 * An API key. Only a SHA-256 hash of the key is stored; `prefix` is its visible, unique first part used to
 * find the row and to recognise the key in listings. The inbound signing secret is stored sealed.
 */
@Entity({ tableName: 'api_keys' })
@Index({ name: 'api_keys_company_idx', properties: ['company'] })
export class ApiKey extends CompanyRecord {
  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text', unique: true })
  prefix!: string;

  @Property({ type: 'text' })
  keyHash!: string;

  @Property({ type: 'text[]' })
  scopes: Opt<string[]> = [];

  @Property({ type: 'text' })
  signingSecretSealed!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  revokedAt: Date | null = null;

  /** When a request last authenticated with the key, to the minute (see ApiKeyCache.authenticate). */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  lastUsedAt: Date | null = null;
}
