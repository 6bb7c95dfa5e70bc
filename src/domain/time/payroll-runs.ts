import type { EntityManager } from '@mikro-orm/postgresql';
import type { PayrollRun as PayrollRunRecord } from '../../generated/schemas';
import { ApiError } from '../../errors';
import { iso } from '../event-format';
import type { ResultOf } from '../workflow-contract';
import type { WorkflowGateway } from '../workflow-gateway';
import { PAYROLL_RUN, type PayrollRunInput } from '../../../workflows/payroll-run.contract';
import { findPage, type Page } from '../page';
import { PayrollRun } from './payroll-run.entity';
import { Timesheet } from './timesheet.entity';

/** One run at a time per company and period: a second request while it runs joins it. */
export const payrollRunWorkflowId = (companyId: string, periodStart: string, periodEnd: string) => `payroll/${companyId}/${periodStart}/${periodEnd}`;

export type PayrollRunOutcome = { state: 'completed'; result: ResultOf<typeof PAYROLL_RUN> } | { state: 'running'; runId: string; workflowId: string };

/**
 * Starts (or joins) the period's payroll run and waits up to `waitMs` for it. A run that takes longer keeps
 * going and the outcome says so. Once a run has finished, a new request starts a new run: it processes what
 * has been locked since.
 */
export async function runPayroll(workflows: WorkflowGateway, input: PayrollRunInput, waitMs: number): Promise<PayrollRunOutcome> {
  if (input.periodEnd < input.periodStart) throw ApiError.invalid('period_end', `must not be before period_start (${input.periodStart})`);
  const workflowId = payrollRunWorkflowId(input.actor.companyId, input.periodStart, input.periodEnd);
  const outcome = await workflows.startAndAwait(
    {
      workflow: PAYROLL_RUN,
      workflowId,
      input,
      whenOpen: 'join',
      afterClosed: 'start',
      memo: { runId: input.runId },
      labels: { companyId: input.actor.companyId, eventType: 'timesheets.processed.batch', recordKey: `${input.periodStart}/${input.periodEnd}` },
      summary: `Payroll run ${input.periodStart} to ${input.periodEnd}`,
    },
    waitMs,
  );
  if (outcome.finished) return { state: 'completed', result: outcome.result };
  // The run we joined may be another request's: its memo has its id.
  return { state: 'running', runId: String(outcome.memo.runId ?? input.runId), workflowId };
}

async function payrollRunRecord(em: EntityManager, run: PayrollRun): Promise<PayrollRunRecord> {
  const processed = await em.find(Timesheet, { payrollRun: run }, { fields: ['id'], orderBy: { timesheetDate: 'asc', id: 'asc' } });
  return {
    id: run.id,
    period_start: run.periodStart,
    period_end: run.periodEnd,
    status: run.status,
    total_count: run.totalCount,
    timesheet_ids: processed.map((t) => t.id),
    requested_by: run.requestedBy,
    workflow_id: run.workflowId,
    created_at: run.createdAt.toISOString(),
    completed_at: iso(run.completedAt),
  };
}

export async function getPayrollRun(em: EntityManager, companyId: string, id: string): Promise<PayrollRunRecord> {
  const run = await em.findOne(PayrollRun, { id, company: companyId });
  if (!run) throw ApiError.notFound('Payroll run');
  return payrollRunRecord(em, run);
}

/** Newest first, like a log. */
export async function listPayrollRuns(em: EntityManager, companyId: string, page: Page) {
  const { items, total, next } = await findPage(em, PayrollRun, { company: companyId }, { createdAt: 'desc', id: 'desc' }, page);
  const runs = await em.find(PayrollRun, { id: { $in: items.map((r) => r.id) } }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  const records: PayrollRunRecord[] = [];
  for (const run of runs) records.push(await payrollRunRecord(em, run));
  return { items: records, total, next };
}
