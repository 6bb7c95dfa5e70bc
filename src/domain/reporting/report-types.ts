import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { Project } from '../work/project.entity';
import { INCOMPLETE_STATUSES } from '../work/work-order-status';
import type { ReportRow, ReportSchedule, ReportType } from './scheduled-report.entity';

/** The days a report covers, inclusive, as YYYY-MM-DD in the schedule's time zone. */
export interface ReportPeriod {
  start: string;
  end: string;
}

/** One kind of scheduled report: its columns, the period a run covers, and its rows. */
interface ReportTypeDefinition {
  columns: readonly string[];
  period(at: Date, schedule: ReportSchedule): ReportPeriod;
  rows(em: EntityManager, schedule: ReportSchedule, period: ReportPeriod): Promise<ReportRow[]>;
}

/** The calendar day `at` falls on in `timezone`. */
export const dayIn = (at: Date, timezone: string): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);

const addDays = (day: string, days: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** The schedule's project, when it names one: a project deleted since fails the run, saying so. */
async function projectFilter(em: EntityManager, schedule: ReportSchedule): Promise<{ sql: string; params: string[] }> {
  if (!schedule.projectId) return { sql: '', params: [] };
  if ((await em.count(Project, { id: schedule.projectId, company: schedule.company.id })) === 0) {
    throw new ApiError('CONFLICT', `Project ${schedule.projectId}, which the schedule reports on, no longer exists; change or delete the schedule`, {
      field: 'project_id',
      reason: 'project no longer exists',
    });
  }
  return { sql: 'and p.id = ?', params: [schedule.projectId] };
}

export const REPORT_TYPE_DEFINITIONS: Readonly<Record<ReportType, ReportTypeDefinition>> = {
  /** Hours of timesheet entries per project over the period_days before the run; entries without a work order under no project. */
  labor_hours_by_project: {
    columns: ['project_id', 'project_code', 'project_name', 'hours', 'billable_hours', 'entries', 'employees'],
    period(at, schedule) {
      const end = addDays(dayIn(at, schedule.timezone), -1);
      return { start: addDays(end, 1 - (schedule.periodDays ?? 7)), end };
    },
    async rows(em, schedule, period) {
      const project = await projectFilter(em, schedule);
      return em.execute<ReportRow[]>(
        `select p.id as project_id, p.project_code, p.name as project_name, sum(e.hours) as hours,
                sum(case when wt.billable then e.hours else 0 end) as billable_hours, count(*)::int as entries, count(distinct t.employee_id)::int as employees
           from timesheet_entries e
           join timesheets t on t.id = e.timesheet_id
           join work_types wt on wt.id = e.work_type_id
           left join work_orders wo on wo.id = e.work_order_id
           left join projects p on p.id = wo.project_id
          where e.company_id = ? and e.entry_date between ? and ? ${project.sql}
          group by p.id, p.project_code, p.name
          order by p.project_code nulls last`,
        [schedule.company.id, period.start, period.end, ...project.params],
      );
    },
  },
  /** Incomplete work orders per project and status when the report runs; overdue ones ended before that day. */
  open_work_orders_by_project: {
    columns: ['project_id', 'project_code', 'project_name', 'open', 'scheduled', 'in_progress', 'on_hold', 'total', 'overdue'],
    period(at, schedule) {
      const day = dayIn(at, schedule.timezone);
      return { start: day, end: day };
    },
    async rows(em, schedule, period) {
      const project = await projectFilter(em, schedule);
      const counts = INCOMPLETE_STATUSES.map((status) => `count(*) filter (where w.status = '${status}')::int as ${status}`).join(', ');
      return em.execute<ReportRow[]>(
        `select p.id as project_id, p.project_code, p.name as project_name, ${counts}, count(*)::int as total,
                count(*) filter (where w.end_date < ?::date)::int as overdue
           from work_orders w
           join projects p on p.id = w.project_id
          where w.company_id = ? and w.status in (${INCOMPLETE_STATUSES.map(() => '?').join(', ')}) ${project.sql}
          group by p.id, p.project_code, p.name
          order by p.project_code`,
        [period.end, schedule.company.id, ...INCOMPLETE_STATUSES, ...project.params],
      );
    },
  },
};

/** CSV (RFC 4180) of the rows in `columns` order. Text that a spreadsheet would run as a formula is prefixed with '. */
export function toCsv(columns: readonly string[], rows: ReportRow[]): string {
  const cell = (value: string | number | null | undefined) => {
    if (value === null || value === undefined) return '';
    let text = String(value);
    if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [columns.join(','), ...rows.map((row) => columns.map((c) => cell(row[c])).join(','))].join('\r\n') + '\r\n';
}
