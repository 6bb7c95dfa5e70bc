import { LockMode } from '@mikro-orm/core';
import { Context } from '@temporalio/activity';
import { recordEvent } from '../src/events/outbox';
import { timesheetsProcessedBatchData } from '../src/domain/time/time-events';
import { PayrollRun } from '../src/domain/time/payroll-run.entity';
import { payrollRunWorkflowId } from '../src/domain/time/payroll-runs';
import type { PayrollRunInput, PayrollRunResult } from '../workflows/payroll-run.contract';
import { applyAction, lifecycleActor } from '../src/domain/time/timesheet-lifecycle';
import { Timesheet } from '../src/domain/time/timesheet.entity';
import { timesheets } from '../src/domain/time/timesheets';
import type { ActivityDeps } from './deps';

/**
 * The steps of a payroll run. Each is idempotent: the run row is found or made with the id chosen before the
 * workflow started, a timesheet already processed by this run is skipped, and a completed run is not closed
 * twice, so no timesheet is processed twice and no event is recorded twice.
 */
export function createPayrollRunActivities({ orm }: ActivityDeps) {
  return {
    /** Records the run (once) and returns the period's locked timesheets, oldest day first. */
    async openPayrollRun(input: PayrollRunInput): Promise<string[]> {
      const { actor, runId, periodStart, periodEnd } = input;
      return orm.em.fork().transactional(async (tx) => {
        if (!(await tx.findOne(PayrollRun, runId))) {
          tx.create(PayrollRun, {
            id: runId,
            company: actor.companyId,
            periodStart,
            periodEnd,
            requestedBy: actor.apiKeyId,
            workflowId: payrollRunWorkflowId(actor.companyId, periodStart, periodEnd),
          });
        }
        const locked = await tx.find(
          Timesheet,
          { company: actor.companyId, status: 'locked', timesheetDate: { $gte: periodStart, $lte: periodEnd } },
          { fields: ['id'], orderBy: { timesheetDate: 'asc', id: 'asc' } },
        );
        return locked.map((t) => t.id);
      });
    },

    /**
     * Processes each timesheet in a transaction of its own, with its timesheet.processed event. One this run
     * processed already (an earlier attempt committed it) is skipped; so is one that is no longer locked.
     */
    async processPayrollTimesheets(input: PayrollRunInput, timesheetIds: string[]): Promise<void> {
      const { actor, runId } = input;
      for (const id of timesheetIds) {
        await orm.em.fork().transactional(async (tx) => {
          const timesheet = await timesheets.loadForUpdate(tx, actor.companyId, id);
          if (timesheet.status !== 'locked') return;
          const run = await tx.findOneOrFail(PayrollRun, runId);
          await applyAction(tx, actor, timesheet, 'process', { payrollRun: run });
        });
        Context.current().heartbeat();
      }
    },

    /** Completes the run with timesheets.processed.batch (none for an empty run), once. */
    async closePayrollRun(input: PayrollRunInput): Promise<PayrollRunResult> {
      const { actor, runId } = input;
      return orm.em.fork().transactional(async (tx) => {
        const run = await tx.findOneOrFail(PayrollRun, runId, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (run.status === 'completed') return { runId, totalCount: run.totalCount! };
        const processed = await tx.find(Timesheet, { payrollRun: run }, { populate: ['employee'], orderBy: { timesheetDate: 'asc', id: 'asc' } });
        const who = await lifecycleActor(tx, actor);
        if (processed.length > 0) recordEvent(tx, actor, 'timesheets.processed.batch', { a: timesheetsProcessedBatchData(processed, who) });
        Object.assign(run, { status: 'completed', totalCount: processed.length, completedAt: who.at });
        return { runId, totalCount: processed.length };
      });
    },
  };
}

export type PayrollRunActivities = ReturnType<typeof createPayrollRunActivities>;
