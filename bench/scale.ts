import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { summary } from './http-load';

/** Inserts work orders `from` … `to` - 1 of a company (numbered S-0000001, …, one second apart, oldest first). */
export async function seedWorkOrders(db: Pool, companyId: string, projectId: string, from: number, to: number): Promise<void> {
  const batch = 100_000;
  for (let start = from; start < to; start += batch) {
    await db.query(
      `insert into work_orders (id, company_id, created_at, updated_at, project_id, work_order_number, title, status, priority,
                                people_skill_requirements, scope_of_work, equipment, specialty_materials, scheduler_notes, custom_fields)
       select gen_random_uuid(), $1, t, t, $2, 'S-' || lpad(i::text, 7, '0'), 'Scale work order ' || i, 'open', 'normal',
              '{}', '{"checklists": []}', '{}', '{}', '{"subtrade_required": null, "scheduling_insights": null}', '{}'
         from generate_series($3::int, $4::int) as i, lateral (select timestamptz '2025-01-01' + i * interval '1 second' as t) as at`,
      [companyId, projectId, start, Math.min(to, start + batch) - 1],
    );
  }
}

export interface PageLatency {
  rows: number;
  offset: number;
  service: { p50: number; p99: number; max: number };
  raw: { p50: number; p99: number; max: number };
}

/** A position in the work-order list: the cursor the api gives for it, and the row it stands for. */
export interface ListPosition {
  cursor: string;
  createdAt: Date;
  id: string;
}

/**
 * The cursor after the work order at `index` (0-based, oldest first), as a client walking the list would hold it:
 * the `next_cursor` of the one-record page at that offset.
 */
export async function positionAt(db: Pool, apiUrl: string, key: () => string, companyId: string, index: number): Promise<ListPosition> {
  const response = await fetch(`${apiUrl}/api/v1/work-orders?limit=1&offset=${index}`, { headers: { 'X-API-Key': key() } });
  const body = (await response.json()) as { pagination?: { next_cursor: string | null } };
  const cursor = body.pagination?.next_cursor;
  if (response.status !== 200 || !cursor) throw new Error(`work-order list answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  const { rows } = await db.query<{ created_at: Date; id: string }>('select created_at, id from work_orders where company_id = $1 order by created_at, id limit 1 offset $2', [
    companyId,
    index,
  ]);
  return { cursor, createdAt: rows[0]!.created_at, id: rows[0]!.id };
}

/**
 * Latency of one page (limit 100) at `offset`, or after `after` (a cursor: the keyset page): the service's GET
 * /api/v1/work-orders and the raw SQL of the same page (`select * … order by created_at, id limit 100`, by offset
 * or past the cursor's row, no total), one request at a time and alternating, so both see the same moments of a
 * busy machine.
 */
export async function measurePage(options: {
  db: Pool;
  apiUrl: string;
  key: () => string;
  companyId: string;
  rows: number;
  offset: number;
  after?: ListPosition;
  samples: number;
}): Promise<PageLatency> {
  const { db, apiUrl, key, companyId, offset, after, samples } = options;
  const service: number[] = [];
  const raw: number[] = [];
  const timed = async (work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  const query = after ? `limit=100&after=${after.cursor}` : `limit=100&offset=${offset}`;
  const get = async () => {
    const response = await fetch(`${apiUrl}/api/v1/work-orders?${query}`, { headers: { 'X-API-Key': key() } });
    const body = (await response.json()) as { data?: unknown[]; pagination?: { total: number } };
    if (response.status !== 200 || body.pagination?.total !== options.rows || body.data?.length === 0) {
      throw new Error(`work-order list answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    }
  };
  const select = () =>
    after
      ? db.query('select * from work_orders where company_id = $1 and (created_at, id) > ($2, $3) order by created_at, id limit 100', [companyId, after.createdAt, after.id])
      : db.query('select * from work_orders where company_id = $1 order by created_at, id limit 100 offset $2', [companyId, offset]);
  // Warm: plans cached, pages in memory.
  for (let i = 0; i < 5; i++) await Promise.all([get(), select()]);
  for (let i = 0; i < samples; i++) {
    service.push(await timed(get));
    raw.push(await timed(select));
  }
  return { rows: options.rows, offset, service: summary(service), raw: summary(raw) };
}
