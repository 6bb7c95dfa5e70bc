import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import type { CompletionReportCreate, CompletionReport as CompletionReportRecord, DailyReportCreate, DailyReport as DailyReportRecord } from '../../generated/schemas';
import { type ApprovalRuntime, WorkflowAlreadyStarted, type WorkflowStart } from '../workflow-gateway';
import { REPORT_APPROVAL, type ReportApprovalInput, type ReportDecision, type ReportKind } from '../../../workflows/report-approval.contract';
import type { Actor } from '../accounts/actor';
import { lockNaturalKey } from '../natural-keys';
import { completeWorkOrder } from '../work/work-orders';
import { WorkOrder } from '../work/work-order.entity';
import { completionReports } from './completion-reports';
import { dailyReports } from './daily-reports';

export const REPORT_SERVICES = { daily: dailyReports, completion: completionReports } as const;

type ReportRecord = DailyReportRecord | CompletionReportRecord;

/** A report's record, and whether it is as the decision left it (false: still waiting for a worker). */
export type DecisionOutcome = { applied: boolean; record: ReportRecord; eventId: string | null };

const SUBMITTED_EVENT = { daily: 'report.daily_submitted', completion: 'report.completion_submitted' } as const;

async function approvalRun(em: EntityManager, input: ReportApprovalInput, record: ReportRecord, afterClosed: WorkflowStart['afterClosed']): Promise<WorkflowStart<typeof REPORT_APPROVAL>> {
  const workOrder = await em.findOneOrFail(WorkOrder, record.work_order_id, { fields: ['workOrderNumber'] });
  return {
    workflow: REPORT_APPROVAL,
    workflowId: record.workflow_id!,
    input,
    whenOpen: 'refuse',
    afterClosed,
    labels: { companyId: input.companyId, eventType: SUBMITTED_EVENT[input.kind], recordKey: workOrder.workOrderNumber, approvalStatus: 'pending' },
    summary: `${input.kind === 'daily' ? `Daily report of ${record.report_date}` : 'Completion report'} of work order ${workOrder.workOrderNumber} waits for approval`,
    details: `Report ${record.id} of company ${input.companyId}. Approve or reject it over REST (POST /${input.kind}-reports/{id}/approve or /reject) or inbound.`,
  };
}

/**
 * Records a submitted report with its event. A report approved at once is final (an auto-approved completion
 * report completes its work order in the same transaction); any other starts its reportApproval workflow
 * before the transaction commits, so no report waits without one. The workflow's first step waits for this
 * transaction (the lock below) and ends when it rolled back.
 */
export async function submitReport<K extends ReportKind>(
  em: EntityManager,
  runtime: ApprovalRuntime,
  actor: Actor,
  kind: K,
  input: K extends 'daily' ? DailyReportCreate : CompletionReportCreate,
  eventId: string,
): Promise<ReportRecord> {
  return em.transactional(async (tx) => {
    const dueAt = new Date(Date.now() + runtime.deadlineMs).toISOString();
    const service = REPORT_SERVICES[kind] as (typeof REPORT_SERVICES)['daily'];
    const record: ReportRecord = await service.create(tx, actor, { ...(input as DailyReportCreate), approval_due_at: dueAt }, { eventId });
    if (record.approval_status === 'pending') {
      await lockNaturalKey(tx, 'report-approval', record.id);
      const workflow = { companyId: actor.companyId, kind, reportId: record.id, deadlineMs: runtime.deadlineMs };
      await runtime.workflows.start(await approvalRun(tx, workflow, record, 'start'));
    } else if (kind === 'completion') {
      await completeWorkOrder(tx, actor, record.work_order_id);
    }
    return record;
  });
}

/**
 * Approves or rejects a report waiting for approval: the decision is signalled to its workflow (started anew if an
 * operator terminated it), which applies it; this waits up to `runtime.waitMs` for that. Signals are kept by
 * Temporal, so a decision sent while no worker runs is applied when one does (applied: false).
 */
export async function decideReport(em: EntityManager, runtime: ApprovalRuntime, kind: ReportKind, id: string, decision: ReportDecision): Promise<DecisionOutcome> {
  const service = REPORT_SERVICES[kind] as (typeof REPORT_SERVICES)['daily'];
  const { companyId } = decision.actor;
  const record: ReportRecord = await service.get(em, companyId, id);
  const decided = decision.approve ? 'approved' : 'rejected';
  if (record.approval_status !== 'pending') {
    throw new ApiError('CONFLICT', `The ${service.label.toLowerCase()} is ${record.approval_status} already and cannot be ${decided}`, {
      field: 'approval_status',
      reason: `is ${record.approval_status}`,
    });
  }
  const workflow = { companyId, kind, reportId: id, deadlineMs: runtime.deadlineMs };
  let outcome;
  try {
    outcome = await runtime.workflows.signalAndAwait(await approvalRun(em, workflow, record, 'start_if_failed'), REPORT_APPROVAL.signals.decide, [decision], runtime.waitMs);
  } catch (error) {
    // Its workflow completed between our read and the signal: another decision was taken.
    if (error instanceof WorkflowAlreadyStarted) return conflictWith(em, service, companyId, id, decided);
    throw error;
  }
  if (!outcome.finished) return { applied: false, record: await service.get(em, companyId, id), eventId: null };
  if (outcome.result.outcome === 'cancelled') throw ApiError.notFound(service.label);
  if (outcome.result.outcome !== decided) return conflictWith(em, service, companyId, id, decided);
  return { applied: true, record: await service.get(em, companyId, id), eventId: outcome.result.eventId };
}

async function conflictWith(em: EntityManager, service: (typeof REPORT_SERVICES)['daily'], companyId: string, id: string, wanted: string): Promise<never> {
  const now = await service.get(em, companyId, id);
  throw new ApiError('CONFLICT', `The ${service.label.toLowerCase()} was ${now.approval_status} meanwhile and cannot be ${wanted}`, {
    field: 'approval_status',
    reason: `is ${now.approval_status}`,
  });
}
