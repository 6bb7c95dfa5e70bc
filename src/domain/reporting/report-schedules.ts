import type { EntityManager } from '@mikro-orm/postgresql';
import { type Client, type ScheduleHandle, ScheduleNotFoundError, ScheduleOverlapPolicy, ServiceError } from '@temporalio/client';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { reportScheduledData } from '../../events/payloads/scheduled-reports';
import type { ReportScheduleCreate, ReportSchedule as ReportScheduleRecord } from '../../generated/schemas';
import { COMPANY_ID, EVENT_TYPE, RECORD_KEY } from '../../temporal/search-attributes';
import type { Actor } from '../accounts/actor';
import type { Page } from '../page';
import { RecordService } from '../records/record-service';
import { Project } from '../work/project.entity';
import { ReportSchedule } from './scheduled-report.entity';

/** What the database keeps of a schedule; its state and next run are Temporal's. */
type StoredSchedule = Omit<ReportScheduleRecord, 'state' | 'next_run_at'>;

/** The gRPC status of a request Temporal refuses as malformed. */
const GRPC_INVALID_ARGUMENT = 3;

export const temporalScheduleId = (scheduleId: string) => `report-schedule/${scheduleId}`;

/** Input of the scheduledReport workflow, fixed when the schedule is made. */
export interface ScheduledReportInput {
  companyId: string;
  scheduleId: string;
}

const FIELDS: Record<string, [number, number]> = { minute: [0, 59], hour: [0, 23], 'day of month': [1, 31], month: [1, 12], 'day of week': [0, 6] };

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
async function withState(temporal: Client, stored: StoredSchedule): Promise<ReportScheduleRecord> {
  try {
    const { state, info } = await temporal.schedule.getHandle(stored.schedule_id).describe();
    return { ...stored, state: state.paused ? 'paused' : 'active', next_run_at: state.paused ? null : (info.nextActionTimes[0]?.toISOString() ?? null) };
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) return { ...stored, state: 'missing', next_run_at: null };
    throw error;
  }
}

export async function getReportSchedule(em: EntityManager, temporal: Client, companyId: string, id: string): Promise<ReportScheduleRecord> {
  return withState(temporal, await reportSchedules.get(em, companyId, id));
}

export async function listReportSchedules(em: EntityManager, temporal: Client, companyId: string, page: Page, where: Record<string, unknown>) {
  const { items, total } = await reportSchedules.list(em, companyId, page, where);
  return { items: await Promise.all(items.map((stored) => withState(temporal, stored))), total };
}

/**
 * Creates a schedule and its Temporal Schedule, then records report.scheduled with its next run. The Temporal
 * Schedule is made inside the transaction (a refusal writes nothing) and deleted again when the commit fails.
 */
export async function createReportSchedule(em: EntityManager, temporal: Client, taskQueue: string, actor: Actor, body: ReportScheduleCreate): Promise<ReportScheduleRecord> {
  assertCron(body.cron);
  const timezone = body.timezone ?? 'UTC';
  assertTimezone(timezone);
  if (body.period_days !== undefined && body.report_type !== 'labor_hours_by_project') throw ApiError.invalid('period_days', 'applies to labor_hours_by_project only');
  if (body.project_id && (await em.count(Project, { id: body.project_id, company: actor.companyId })) === 0) {
    throw ApiError.invalid('project_id', 'does not match a project of your company');
  }
  let handle: ScheduleHandle | undefined;
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
      const input: ScheduledReportInput = { companyId: actor.companyId, scheduleId: schedule.id };
      handle = await temporal.schedule.create({
        scheduleId: temporalScheduleId(schedule.id),
        spec: { cronExpressions: [schedule.cron], timezone },
        action: {
          type: 'startWorkflow',
          workflowType: 'scheduledReport',
          taskQueue,
          args: [input],
          workflowId: `report-run/${schedule.id}`,
          typedSearchAttributes: [
            { key: COMPANY_ID, value: actor.companyId },
            { key: EVENT_TYPE, value: 'report.generated' },
            { key: RECORD_KEY, value: schedule.id },
          ],
          staticSummary: `Scheduled report "${schedule.name}" (${schedule.reportType})`,
        },
        // A run still going when the next is due makes that one skip; a run missed while Temporal was down is made up within a day.
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
        state: { note: `Report schedule ${schedule.id} of company ${actor.companyId}. Pause, unpause or delete it here or over REST.` },
      });
      const record = await withState(temporal, await reportSchedules.get(tx, actor.companyId, schedule.id));
      recordEvent(tx, actor, 'report.scheduled', { b: reportScheduledData(schedule, record.next_run_at) });
      return record;
    });
  } catch (error) {
    await handle?.delete().catch(() => undefined);
    // Temporal refusing the spec is the request's fault, whatever the checks above let through.
    if (error instanceof ServiceError && (error.cause as { code?: number } | undefined)?.code === GRPC_INVALID_ARGUMENT) {
      throw ApiError.invalid('cron', `is refused by Temporal: ${error.message}`);
    }
    throw error;
  }
}

/** The Temporal Schedule of the company's schedule `id` (404 for an unknown schedule). */
async function scheduleHandle(em: EntityManager, temporal: Client, companyId: string, id: string): Promise<ScheduleHandle> {
  return temporal.schedule.getHandle((await reportSchedules.get(em, companyId, id)).schedule_id);
}

/** Runs `act` on the Temporal Schedule; one deleted in the Temporal UI is a 409 saying so. */
async function onSchedule(em: EntityManager, temporal: Client, companyId: string, id: string, act: (handle: ScheduleHandle) => Promise<void>): Promise<ReportScheduleRecord> {
  try {
    await act(await scheduleHandle(em, temporal, companyId, id));
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
    throw new ApiError('CONFLICT', 'The Temporal Schedule was deleted (in the Temporal UI); delete this schedule and create it again', { field: 'state', reason: 'is missing' });
  }
  return getReportSchedule(em, temporal, companyId, id);
}

export const pauseReportSchedule = (em: EntityManager, temporal: Client, actor: Actor, id: string) =>
  onSchedule(em, temporal, actor.companyId, id, (handle) => handle.pause(`Paused over REST by API key ${actor.apiKeyId}`));

export const unpauseReportSchedule = (em: EntityManager, temporal: Client, actor: Actor, id: string) =>
  onSchedule(em, temporal, actor.companyId, id, (handle) => handle.unpause(`Unpaused over REST by API key ${actor.apiKeyId}`));

/** Runs the report now, as the schedule would (a paused schedule runs too). */
export const runReportScheduleNow = (em: EntityManager, temporal: Client, companyId: string, id: string) =>
  onSchedule(em, temporal, companyId, id, (handle) => handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL));

/** Deletes the schedule and its Temporal Schedule (already gone when deleted in the UI); its reports are kept. */
export async function removeReportSchedule(em: EntityManager, temporal: Client, actor: Actor, id: string): Promise<void> {
  const handle = await scheduleHandle(em, temporal, actor.companyId, id);
  await em.transactional(async (tx) => {
    await reportSchedules.remove(tx, actor, id);
    await handle.delete().catch((error: unknown) => {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    });
  });
}
