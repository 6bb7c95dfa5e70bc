import type { Orm } from '../src/db/orm';
import type { Logger } from '../src/logger';

/** What activities are built from; tests pass real instances of each. */
export interface ActivityDeps {
  orm: Orm;
  logger: Logger;
}
