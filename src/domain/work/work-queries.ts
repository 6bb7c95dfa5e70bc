import type { EntityManager } from '@mikro-orm/postgresql';
import type { ScheduleEntry } from '../../generated/schemas';
import { isUuid, isValidDate } from '../../schemas/formats';
import { encodeCursor, invalidCursor, type ListPage, type Page } from '../page';

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** At most this many search results (webhooks.md 2.11 gives no limit; a search is not a listing). */
export const SEARCH_LIMIT = 100;

export interface SearchRequest {
  term: string;
  /** Whole value, ignoring case; otherwise the term anywhere in the value, ignoring case. */
  exact: boolean;
}

/** `lower(column) = lower(term)` or `column ilike %term%`, with the term as a parameter. */
function matching(column: string, search: SearchRequest): { sql: string; param: string } {
  return search.exact ? { sql: `lower(${column}) = lower(?)`, param: search.term } : { sql: `${column} ilike ?`, param: `%${escapeLike(search.term)}%` };
}

/** project.search (webhooks.md 2.10): exact matches first, then by name. */
export async function searchProjects(em: EntityManager, companyId: string, search: SearchRequest & { field: 'project_name' | 'project_code' }) {
  const column = search.field === 'project_code' ? 'p.project_code' : 'p.name';
  const match = matching(column, search);
  return em.execute<{ id: string; project_name: string; project_code: string; description: string | null; start_date: string | null; end_date: string | null }[]>(
    `select p.id, p.name as project_name, p.project_code, p.description, to_char(p.start_date, 'YYYY-MM-DD') as start_date, to_char(p.end_date, 'YYYY-MM-DD') as end_date
       from projects p where p.company_id = ? and ${match.sql}
      order by lower(${column}) = lower(?) desc, p.name, p.id limit ?`,
    [companyId, match.param, search.term, SEARCH_LIMIT],
  );
}

/** work_order.search (webhooks.md 2.10), optionally within one project. */
export async function searchWorkOrders(
  em: EntityManager,
  companyId: string,
  search: SearchRequest & { field: 'phase_name' | 'work_order_number'; projectId?: string },
) {
  const column = search.field === 'work_order_number' ? 'w.work_order_number' : 'w.title';
  const match = matching(column, search);
  const rows = await em.execute<
    {
      id: string;
      work_order_number: string;
      phase_name: string;
      status: string;
      priority: string;
      start_date: string | null;
      end_date: string | null;
      project_id: string;
      project_code: string;
      project_name: string;
    }[]
  >(
    `select w.id, w.work_order_number, w.title as phase_name, w.status, w.priority,
            to_char(w.start_date, 'YYYY-MM-DD') as start_date, to_char(w.end_date, 'YYYY-MM-DD') as end_date,
            p.id as project_id, p.project_code, p.name as project_name
       from work_orders w join projects p on p.id = w.project_id
      where w.company_id = ? and ${match.sql} ${search.projectId ? 'and w.project_id = ?' : ''}
      order by lower(${column}) = lower(?) desc, w.work_order_number, w.id limit ?`,
    [companyId, match.param, ...(search.projectId ? [search.projectId] : []), search.term, SEARCH_LIMIT],
  );
  return rows.map(({ project_id, project_code, project_name, ...workOrder }) => ({ ...workOrder, project: { id: project_id, project_code, project_name } }));
}

export interface ScheduleFilters {
  from?: string;
  to?: string;
  employeeId?: string;
  projectId?: string;
  status?: string;
}

/** The schedule's cursors: its order is its own (start date, start time with no time first, number, id). */
const SCHEDULE_LIST = 'work_orders.schedule';
const SCHEDULE_ORDER = "w.start_date, coalesce(w.start_time, ''), w.work_order_number, w.id";

/** The start date, start time ('' for none), number and id of a schedule cursor; a 400 when it is not one. */
function scheduleCursorKeys(page: Page): [string, string, string, string] | null {
  if (!page.after) return null;
  const { list, keys } = page.after;
  const [date, time, number, id] = keys;
  if (list !== SCHEDULE_LIST || keys.length !== 4 || typeof date !== 'string' || !isValidDate(date) || typeof time !== 'string' || typeof number !== 'string' || typeof id !== 'string' || !isUuid(id)) {
    throw invalidCursor();
  }
  return [date, time, number, id];
}

/**
 * The schedule: one entry per work order with a start date, in the order a calendar shows them (start, then
 * number), with where it happens and who is on it. A range keeps the entries that overlap it. After a cursor,
 * the entries that follow it in that order; the total stays that of the whole schedule.
 */
export async function listSchedule(em: EntityManager, companyId: string, page: Page, filters: ScheduleFilters): Promise<ListPage<ScheduleEntry>> {
  const after = scheduleCursorKeys(page);
  const conditions = ['w.company_id = ?', 'w.start_date is not null'];
  const params: unknown[] = [companyId];
  const where = (condition: string, ...values: unknown[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (filters.from) where('coalesce(w.end_date, w.start_date) >= ?::date', filters.from);
  if (filters.to) where('w.start_date <= ?::date', filters.to);
  if (filters.projectId) where('w.project_id = ?', filters.projectId);
  if (filters.status) where('w.status = ?', filters.status);
  if (filters.employeeId) {
    where('(w.site_lead_id = ? or exists (select 1 from work_order_assignees a where a.work_order_id = w.id and a.employee_id = ?))', filters.employeeId, filters.employeeId);
  }
  const rows = await em.execute<
    {
      id: string;
      work_order_number: string;
      title: string;
      status: string;
      priority: string;
      start_date: string;
      end_date: string | null;
      start_time: string | null;
      end_time: string | null;
      site_lead_id: string | null;
      project_id: string;
      project_code: string;
      project_name: string;
      location_id: string;
      location_name: string;
      address: string | null;
      latitude: number | null;
      longitude: number | null;
      total: string;
    }[]
  >(
    `select w.id, w.work_order_number, w.title, w.status, w.priority,
            to_char(w.start_date, 'YYYY-MM-DD') as start_date, to_char(w.end_date, 'YYYY-MM-DD') as end_date, w.start_time, w.end_time, w.site_lead_id,
            p.id as project_id, p.project_code, p.name as project_name,
            l.id as location_id, l.name as location_name, l.latitude, l.longitude,
            nullif(concat_ws(', ', nullif(l.address_line_1, ''), nullif(l.address_line_2, ''), nullif(l.city, ''), nullif(l.province, ''), nullif(l.postal_code, ''), nullif(l.country, '')), '') as address,
            ${after ? `(select count(*) from work_orders w where ${conditions.join(' and ')})` : 'count(*) over ()'} as total
       from work_orders w join projects p on p.id = w.project_id join locations l on l.id = p.location_id
      where ${conditions.join(' and ')}${after ? ` and (${SCHEDULE_ORDER}) > (?::date, ?::text, ?::text, ?::uuid)` : ''}
      order by ${SCHEDULE_ORDER}
      limit ? offset ?`,
    [...(after ? params : []), ...params, ...(after ?? []), page.limit + 1, page.offset],
  );
  // One more than the page, to tell whether another follows.
  const more = rows.length > page.limit;
  if (more) rows.pop();
  const last = rows.at(-1);
  const next = more && last ? encodeCursor({ list: SCHEDULE_LIST, keys: [last.start_date, last.start_time ?? '', last.work_order_number, last.id] }) : null;
  const total = rows.length ? Number(rows[0]!.total) : page.offset > 0 || after ? Number((await em.execute<{ n: string }[]>(`select count(*) as n from work_orders w where ${conditions.join(' and ')}`, params))[0]!.n) : 0;
  const ids = rows.map((r) => r.id);
  const people = ids.length
    ? await em.execute<{ work_order_id: string; employee_id: string; emp_number: string; name: string; position: number }[]>(
        `select x.work_order_id, e.id as employee_id, e.emp_number, e.name, x.position from (
           select w.id as work_order_id, w.site_lead_id as employee_id, -1 as position from work_orders w where w.id in (select json_array_elements_text(?::json)::uuid) and w.site_lead_id is not null
           union all
           select a.work_order_id, a.employee_id, a.position from work_order_assignees a where a.work_order_id in (select json_array_elements_text(?::json)::uuid)
         ) x join employees e on e.id = x.employee_id order by x.work_order_id, x.position`,
        [JSON.stringify(ids), JSON.stringify(ids)],
      )
    : [];
  const items = rows.map((r): ScheduleEntry => {
    const crew = people.filter((p) => p.work_order_id === r.id);
    const seen = new Set<string>();
    return {
      work_order_id: r.id,
      work_order_number: r.work_order_number,
      title: r.title,
      status: r.status,
      priority: r.priority,
      all_day: r.start_time === null && r.end_time === null,
      starts_at: `${r.start_date}T${r.start_time ?? '00:00'}:00.000Z`,
      ends_at: r.end_date ? `${r.end_date}T${r.end_time ?? '23:59'}:00.000Z` : null,
      start_date: r.start_date,
      end_date: r.end_date,
      start_time: r.start_time,
      end_time: r.end_time,
      project: { id: r.project_id, project_code: r.project_code, name: r.project_name },
      location: { id: r.location_id, name: r.location_name, address: r.address, coordinates: { latitude: r.latitude, longitude: r.longitude } },
      crew: crew
        .filter((p) => !seen.has(p.employee_id) && seen.add(p.employee_id))
        .map((p) => ({ employee_id: p.employee_id, emp_number: p.emp_number, name: p.name, role: p.employee_id === r.site_lead_id ? 'site_lead' : 'crew_member' })),
    };
  });
  return { items, total, next };
}
