import { Entity, Index, Property, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../../domain/company-record';

export const CONSOLE_ROLES = ['admin', 'viewer'] as const;
/** admin manages keys, endpoints, deliveries and users; viewer reads. */
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** A person who signs in to the account settings console of one company. Only an argon2id hash of the password is kept. */
@Entity({ tableName: 'console_users' })
@Unique({ name: 'console_users_email_unique', expression: 'create unique index "console_users_email_unique" on "console_users" (lower("email"))' })
@Index({ name: 'console_users_company_idx', properties: ['company'] })
export class ConsoleUser extends CompanyRecord {
  @Property({ type: 'text' })
  email!: string;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text' })
  role!: ConsoleRole;

  @Property({ type: 'text', hidden: true })
  passwordHash!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  lastSignInAt: Date | null = null;
}
