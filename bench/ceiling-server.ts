/**
 * The ceilings of the benchmark: the same work as the service's endpoints with nothing around it. Bare Koa
 * (no router, no middleware), one pg pool of the service's size, and a Temporal client; run as a process of
 * its own, like the api. Started by bench/run.ts with DATABASE_URL, TEMPORAL_ADDRESS, NOOP_TASK_QUEUE, PORT.
 */
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) });
const app = new Koa();

async function readJson(req: NodeJS.ReadableStream): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>;
}

async function main() {
  const temporal = new Client({ connection: await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! }) });
  app.use(async (ctx) => {
    const [, first, second] = ctx.path.split('/');
    if (first === 'json') {
      ctx.body = { ok: true };
    } else if (first === 'projects' && ctx.method === 'GET' && !second) {
      // The page and its exact total in one statement, as the service answers a list.
      const { rows } = await pool.query(
        `select p.*, (select count(*) from projects where company_id = $1) as total
           from projects p where p.company_id = $1 order by p.created_at, p.id limit $2 offset $3`,
        [ctx.query.company, Number(ctx.query.limit ?? 50), Number(ctx.query.offset ?? 0)],
      );
      ctx.body = { data: rows, total: rows[0]?.total ?? 0 };
    } else if (first === 'projects' && ctx.method === 'GET') {
      const { rows } = await pool.query('select * from projects where id = $1 and company_id = $2', [second, ctx.query.company]);
      ctx.status = rows.length ? 200 : 404;
      ctx.body = rows[0] ?? {};
    } else if (first === 'customers' && ctx.method === 'POST') {
      const body = await readJson(ctx.req);
      const client = await pool.connect();
      try {
        await client.query('begin');
        const { rows } = await client.query('insert into customers (id, company_id, name, created_at, updated_at) values ($1, $2, $3, now(), now()) returning *', [
          uuidv7(),
          body.company_id,
          body.name,
        ]);
        await client.query(
          `insert into outbox_events (id, company_id, event_type, data, created_at, updated_at) values ($1, $2, 'customer.created', $3, now(), now())`,
          [uuidv7(), body.company_id, JSON.stringify({ customer_id: rows[0].id, name: body.name })],
        );
        await client.query('commit');
        ctx.status = 201;
        ctx.body = rows[0];
      } catch (error) {
        await client.query('rollback');
        throw error;
      } finally {
        client.release();
      }
    } else if (first === 'workflows' && ctx.method === 'POST') {
      ctx.body = await temporal.workflow.execute('noopWorkflow', { taskQueue: process.env.NOOP_TASK_QUEUE!, workflowId: `noop/${randomUUID()}`, args: [] });
    } else {
      ctx.status = 404;
    }
  });
  const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ceiling server listening'));
  process.on('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void Promise.all([pool.end(), temporal.connection.close()]).then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
