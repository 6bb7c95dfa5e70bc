import { Entity, type Opt, PrimaryKey, Property } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';

/** A customer account (tenant). Every record belongs to exactly one company. */
@Entity({ tableName: 'companies' })
export class Company {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'text' })
  name!: string;

  /** Last work order number handed out; incremented under a row lock so numbers never repeat. */
  @Property({ type: 'integer', default: 0 })
  workOrderSequence: Opt<number> = 0;

  /** Last purchase order number handed out, the same way. */
  @Property({ type: 'integer', default: 0 })
  purchaseOrderSequence: Opt<number> = 0;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Opt<Date> = new Date();
}
