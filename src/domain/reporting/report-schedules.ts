import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { reportScheduledData } from './scheduled-report-events';
import type { ReportScheduleCreate, ReportSchedule as ReportScheduleRecord } from '../../generated/schemas';
import { type ScheduleGateway, ScheduleMissing, ScheduleRefused } from '../workflow-gateway';
import { SCHEDULED_REPORT } from '../../../workflows/scheduled-report.contract';
import type { Actor } from '../accounts/actor';
import type { Page } from '../page';
import { RecordService } from '../records/record-service';
import { Project } from '../work/project.entity';
import { ReportSchedule } from './scheduled-report.entity';

/** What the database keeps of a schedule; its state and next run are Temporal's. */
type StoredSchedule = Omit<ReportScheduleRecord, 'state' | 'next_run_at'>;

export const temporalScheduleId = (scheduleId: string) => `report-schedule/${scheduleId}`;

const FIELDS: Record<string, [number, number]> = { minute: [0, 59], hour: [0, 23], 'day of month': [1, 31], month: [1, 12], 'day of week': [0, 6] };

/** Each field's numbers (leading zeros allowed) as a regular expression, in the order of FIELDS. */
const FIELD_NUMBERS = ['[1-5]?[0-9]', '(?:1?[0-9]|2[0-3])', '(?:[1-9]|[12][0-9]|3[01])', '(?:[1-9]|1[0-2])', '[0-6]'].map((n) => `0*${n}`);

/**
 * The form assertCron accepts, for the OpenAPI document: each field a list of *, numbers or ranges within its
 * range, each with an optional step. A range must also run upwards (1-5, not 5-1), which no pattern states.
 */
export const CRON_PATTERN = `^\\s*${FIELD_NUMBERS.map((n) => {
  const item = `(?:\\*|${n}(?:-${n})?)(?:/0*[1-9][0-9]*)?`;
  return `${item}(?:,${item})*`;
}).join('\\s+')}\\s*$`;

/** 400 naming cron unless it is five fields of numbers, *, ranges, steps and lists, each in its field's range. */
function assertCron(cron: string): void {
  const parts = cron.trim().split(/\s+/);
  const names = Object.keys(FIELDS);
  if (parts.length !== names.length) throw ApiError.invalid('cron', `must have 5 fields (${names.join(' ')}), e.g. 0 6 * * 1`);
  parts.forEach((part, i) => {
    const [min, max] = FIELDS[names[i]!]!;
    for (const item of part.split(',')) {
      const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
      const numbers = match ? [match[2], match[3]].filter((n) => n !== undefined).map(Number) : [];
      const step = match?.[4] === undefined ? 1 : Number(match[4]);
      if (!match || numbers.some((n) => n < min || n > max) || (numbers.length === 2 && numbers[0]! > numbers[1]!) || step < 1) {
        throw ApiError.invalid('cron', `has "${item}" as its ${names[i]} field: use *, ${min}-${max}, ranges a-b, steps /n or lists`);
      }
    }
  });
}

/** Canonical IANA names, the ones Temporal's time zone database surely has too. */
const TIME_ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);

function assertTimezone(timezone: string): void {
  if (!TIME_ZONES.has(timezone)) throw ApiError.invalid('timezone', 'is not a canonical IANA time zone name (e.g. America/Toronto, UTC)');
}

/** Schedules as the database keeps them; the REST routes add their state from Temporal (withState). */
export const reportSchedules = new RecordService<ReportSchedule, StoredSchedule>({
  entity: ReportSchedule,
  label: 'Report schedule',
  wire: {
    name: 'name',
    report_type: 'reportType',
    cron: 'cron',
    timezone: 'timezone',
    project_id: 'projectId',
    period_days: 'periodDays',
    schedule_id: { read: (view) => temporalScheduleId((view as unknown as ReportSchedule).id) },
    created_by: 'createdBy',
  },
});

/** A schedule with its state and next run, as Temporal has them. */
async function withState(schedules: ScheduleGateway, stored: StoredSchedule): Promise<ReportScheduleRecord> {
  const state = await schedules.describe(stored.schedule_id);
  if (!state) return { ...stored, state: 'missing', next_run_at: null };
  return { ...stored, state: state.paused ? 'paused' : 'active', next_run_at: state.paused ? null : state.nextRunAt };
}

export async function getReportSchedule(em: EntityManager, schedules: ScheduleGateway, companyId: string, id: string): Promise<ReportScheduleRecord> {
  return withState(schedules, await reportSchedules.get(em, companyId, id));
}

export async function listReportSchedules(em: EntityManager, schedules: ScheduleGateway, companyId: string, page: Page, where: Record<string, unknown>) {
  const found = await reportSchedules.list(em, companyId, page, where);
  return { ...found, items: await Promise.all(found.items.map((stored) => withState(schedules, stored))) };
}

/**
 * Creates a schedule and its Temporal Schedule, then records report.scheduled with its next run. The Temporal
 * Schedule is made inside the transaction (a refusal writes nothing) and deleted again when the commit fails.
 * A run still going when the next is due makes that one skip; a run missed while Temporal was down is made up
 * within a day.
 */
export async function createReportSchedule(em: EntityManager, schedules: ScheduleGateway, actor: Actor, body: ReportScheduleCreate): Promise<ReportScheduleRecord> {
  assertCron(body.cron);
  const timezone = body.timezone ?? 'UTC';
  assertTimezone(timezone);
  if (body.period_days !== undefined && body.report_type !== 'labor_hours_by_project') throw ApiError.invalid('period_days', 'applies to labor_hours_by_project only');
  if (body.project_id && (await em.count(Project, { id: body.project_id, company: actor.companyId })) === 0) {
    throw ApiError.invalid('project_id', 'does not match a project of your company');
  }
  let created: string | undefined;
  try {
    return await em.transactional(async (tx) => {
      const schedule = tx.create(ReportSchedule, {
        company: actor.companyId,
        name: body.name.trim(),
        reportType: body.report_type,
        cron: body.cron.trim().replace(/\s+/g, ' '),
        timezone,
        projectId: body.project_id ?? null,
        periodDays: body.report_type === 'labor_hours_by_project' ? (body.period_days ?? 7) : null,
        createdBy: actor.apiKeyId,
      });
      await tx.flush();
      await schedules.create({
        scheduleId: temporalScheduleId(schedule.id),
        cron: schedule.cron,
        timezone,
        run: {
          workflow: SCHEDULED_REPORT,
          workflowId: `report-run/${schedule.id}`,
          input: { companyId: actor.companyId, scheduleId: schedule.id },
          labels: { companyId: actor.companyId, eventType: 'report.generated', recordKey: schedule.id },
          summary: `Scheduled report "${schedule.name}" (${schedule.reportType})`,
        },
        note: `Report schedule ${schedule.id} of company ${actor.companyId}. Pause, unpause or delete it here or over REST.`,
      });
      created = temporalScheduleId(schedule.id);
      const record = await withState(schedules, await reportSchedules.get(tx, actor.companyId, schedule.id));
      recordEvent(tx, actor, 'report.scheduled', { b: reportScheduledData(schedule, record.next_run_at) });
      return record;
    });
  } catch (error) {
    if (created) await schedules.delete(created).catch(() => undefined);
    // Temporal refusing the spec is the request's fault, whatever the checks above let through.
    if (error instanceof ScheduleRefused) throw ApiError.invalid('cron', `is refused by Temporal: ${error.message}`);
    throw error;
  }
}

/** Runs `act` on the company's schedule `id` (404 for an unknown one); one deleted in the Temporal UI is a 409 saying so. */
async function onSchedule(em: EntityManager, schedules: ScheduleGateway, companyId: string, id: string, act: (scheduleId: string) => Promise<void>): Promise<ReportScheduleRecord> {
  const { schedule_id } = await reportSchedules.get(em, companyId, id);
  try {
    await act(schedule_id);
  } catch (error) {
    if (!(error instanceof ScheduleMissing)) throw error;
    throw new ApiError('CONFLICT', 'The Temporal Schedule was deleted (in the Temporal UI); delete this schedule and create it again', { field: 'state', reason: 'is missing' });
  }
  return getReportSchedule(em, schedules, companyId, id);
}

export const pauseReportSchedule = (em: EntityManager, schedules: ScheduleGateway, actor: Actor, id: string) =>
  onSchedule(em, schedules, actor.companyId, id, (scheduleId) => schedules.pause(scheduleId, `Paused over REST by API key ${actor.apiKeyId}`));

export const unpauseReportSchedule = (em: EntityManager, schedules: ScheduleGateway, actor: Actor, id: string) =>
  onSchedule(em, schedules, actor.companyId, id, (scheduleId) => schedules.unpause(scheduleId, `Unpaused over REST by API key ${actor.apiKeyId}`));

/** Runs the report now, as the schedule would (a paused schedule runs too). */
export const runReportScheduleNow = (em: EntityManager, schedules: ScheduleGateway, companyId: string, id: string) =>
  onSchedule(em, schedules, companyId, id, (scheduleId) => schedules.trigger(scheduleId));

/** Deletes the schedule and its Temporal Schedule (already gone when deleted in the UI); its reports are kept. */
export async function removeReportSchedule(em: EntityManager, schedules: ScheduleGateway, actor: Actor, id: string): Promise<void> {
  const { schedule_id } = await reportSchedules.get(em, actor.companyId, id);
  await em.transactional(async (tx) => {
    await reportSchedules.remove(tx, actor, id);
    await schedules.delete(schedule_id);
  });
}
