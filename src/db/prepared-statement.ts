import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type { Client, QueryConfig, QueryResultRow } from 'pg';
import { UNTRACED } from '../observability/statement-spans';

/**
 * A statement of a hot path (one every request runs), sent as a named prepared statement of pg: PostgreSQL parses
 * and plans it once per connection, and the api skips knex's and MikroORM's work per query (the admission alone:
 * 86–113 against 153–176 µs of api CPU through `em.execute`; docs/benchmarks.md). Only for statements whose plan
 * does not depend on their values: PostgreSQL may settle on one generic plan for a named statement. It runs on the
 * connection of `em`'s transaction when there is one, else on one of the ORM's pool. Values are pg's `$n` parameters,
 * given by place (`rows`) or by name (`run`, when the statement names its parameters); rows come as pg parses them
 * (no entity mapping).
 */
export class PreparedStatement<Row extends QueryResultRow, Params extends Record<string, unknown> = Record<string, never>> {
  /** The parameters' names in the order of their places: `$1` is the first. */
  private readonly names: (keyof Params)[];

  constructor(
    /** Unique among the process's prepared statements: pg keeps each name's text per connection. */
    readonly name: string,
    readonly text: string,
    private readonly options: {
      /** `false` for the bookkeeping of every request (the admission): no span of its own (statement-spans.ts). */
      traced?: boolean;
      /** Each parameter's place in `text`: `{ companies: 1 }` is `$1`. Its call sites then name what they pass. */
      params?: { [Name in keyof Params]-?: number };
    } = {},
  ) {
    const places = Object.entries(options.params ?? {}) as [keyof Params, number][];
    this.names = places.sort(([, a], [, b]) => a - b).map(([name]) => name);
    if (places.some(([, place], i) => place !== i + 1)) throw new Error(`${name}: its parameters must take the places $1 to $${places.length}`);
  }

  /** Runs it with its parameters by name, each put in its place. */
  run(em: EntityManager, params: Params): Promise<Row[]> {
    return this.rows(
      em,
      this.names.map((name) => params[name]),
    );
  }

  async rows(em: EntityManager, values: unknown[]): Promise<Row[]> {
    // A transaction's client hands out the transaction's connection and keeps it on release.
    const client = (em.getTransactionContext<Knex.Transaction>() ?? em.getConnection().getKnex()).client;
    const connection = (await client.acquireConnection()) as Client;
    try {
      const config: QueryConfig & { [UNTRACED]: boolean } = { name: this.name, text: this.text, values, [UNTRACED]: this.options.traced === false };
      const result = await connection.query<Row>(config);
      return result.rows;
    } finally {
      await client.releaseConnection(connection);
    }
  }
}

/**
 * A call of a database function by its parameters' names, `select * from f(p_a => $1, p_b => $2, …)`, prepared as
 * above: its values come from one object keyed by those names, so a call reads as the function's signature does, and
 * an argument left out is refused by PostgreSQL instead of shifting the others. `parameters` is the order of the `$n`.
 */
export class FunctionCall<Args extends Record<string, unknown>, Row extends QueryResultRow> {
  private readonly statement: PreparedStatement<Row, Args>;

  constructor(name: string, parameters: readonly (keyof Args & string)[]) {
    const places = Object.fromEntries(parameters.map((parameter, i) => [parameter, i + 1])) as { [Name in keyof Args]-?: number };
    this.statement = new PreparedStatement<Row, Args>(name, `select * from ${name}(${parameters.map((parameter, i) => `${parameter} => $${i + 1}`).join(', ')})`, { params: places });
  }

  rows(em: EntityManager, args: Args): Promise<Row[]> {
    return this.statement.run(em, args);
  }
}
