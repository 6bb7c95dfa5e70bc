import type { EntityManager } from '@mikro-orm/postgresql';
import type { ScheduledReportInput, ScheduledReportResult } from '../workflows/scheduled-report.contract';
import { reportDownloadUrl } from '../src/domain/reporting/report-runs';
import { REPORT_TYPE_DEFINITIONS } from '../src/domain/reporting/report-types';
import { ReportRun, ReportSchedule } from '../src/domain/reporting/scheduled-report.entity';
import { recordEvent } from '../src/events/outbox';
import { reportFailedData, reportGeneratedData } from '../src/domain/reporting/scheduled-report-events';
import type { ActivityDeps } from './deps';

/** One run: its schedule's input, the workflow that makes it, and the time it was started for. */
export interface ScheduledRun extends ScheduledReportInput {
  workflowId: string;
  at: string;
}

/**
 * Finds what an earlier attempt of this run stored, else the schedule to run; runs of a deleted schedule are
 * skipped. Scheduled runs are no API key's doing, so every subscriber gets their events.
 */
async function start(tx: EntityManager, run: ScheduledRun) {
  const done = await tx.findOne(ReportRun, { workflowId: run.workflowId });
  const schedule = done ? null : await tx.findOne(ReportSchedule, { id: run.scheduleId, company: run.companyId });
  return { done: done && { status: done.status, runId: done.id }, schedule, origin: { companyId: run.companyId, apiKeyId: null } };
}

const newRun = (tx: EntityManager, run: ScheduledRun, schedule: ReportSchedule, period: { start: string; end: string }) =>
  tx.create(ReportRun, {
    company: schedule.company,
    schedule,
    reportType: schedule.reportType,
    name: schedule.name,
    periodStart: period.start,
    periodEnd: period.end,
    workflowId: run.workflowId,
    status: 'generated',
  });

export function createScheduledReportActivities({ orm, publicBaseUrl }: ActivityDeps) {
  return {
    /** Generates the report and stores it with report.generated, in one transaction. */
    async generateScheduledReport(run: ScheduledRun): Promise<ScheduledReportResult> {
      return orm.em.fork().transactional(async (tx) => {
        const { done, schedule, origin } = await start(tx, run);
        if (done) return done;
        if (!schedule) return { status: 'skipped', runId: null };
        const type = REPORT_TYPE_DEFINITIONS[schedule.reportType];
        const period = type.period(new Date(run.at), schedule);
        const rows = await type.rows(tx, schedule, period);
        const report = Object.assign(newRun(tx, run, schedule, period), { rows, rowCount: rows.length });
        await tx.flush();
        recordEvent(tx, origin, 'report.generated', { b: reportGeneratedData(report, reportDownloadUrl(publicBaseUrl, report.id)) });
        return { status: 'generated', runId: report.id };
      });
    },

    /** Records the failed run with its reason and report.failed. */
    async recordScheduledReportFailure(run: ScheduledRun, reason: string): Promise<ScheduledReportResult> {
      return orm.em.fork().transactional(async (tx) => {
        const { done, schedule, origin } = await start(tx, run);
        if (done) return done;
        if (!schedule) return { status: 'skipped', runId: null };
        const period = REPORT_TYPE_DEFINITIONS[schedule.reportType].period(new Date(run.at), schedule);
        const report = Object.assign(newRun(tx, run, schedule, period), { status: 'failed', failureReason: reason });
        await tx.flush();
        recordEvent(tx, origin, 'report.failed', { b: reportFailedData(report) });
        return { status: 'failed', runId: report.id };
      });
    },
  };
}

export type ScheduledReportActivities = ReturnType<typeof createScheduledReportActivities>;
