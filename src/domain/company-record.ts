import { ManyToOne, type Opt, PrimaryKey, Property, type Ref } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';
import { Company } from './accounts/company.entity';

/**
 * Base of every tenant-owned row: a time-ordered UUID (v7 keeps B-tree inserts local), the owning company
 * and timestamps. Every query of a tenant-owned entity filters on `company`; that is what makes another
 * company's id a 404.
 */
export abstract class CompanyRecord {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Company, { ref: true, deleteRule: 'cascade' })
  company!: Ref<Company>;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() })
  updatedAt: Opt<Date> = new Date();
}
