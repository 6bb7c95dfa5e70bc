import { ApiError } from '../../errors';
import { completionSubmittedData } from './report-events';
import type { CompletionReportCreate, CompletionReport as CompletionReportRecord } from '../../generated/schemas';
import { lockNaturalKey } from '../natural-keys';
import { RecordService } from '../records/record-service';
import { WorkOrder } from '../work/work-order.entity';
import { INCOMPLETE_STATUSES } from '../work/work-order-status';
import { type ChecklistItem, CompletionReport } from './report.entity';
import { type ApprovalDue, REPORT_EVENT_RELATIONS, reportFields, settleApproval } from './report-fields';

const checklist = (items: unknown) => (items as { item_name: string; status: string; notes?: string | null }[]).map((i): ChecklistItem => ({ item_name: i.item_name, status: i.status, notes: i.notes ?? null }));

/** Whether the report skips the manager's review: only when the sender says both (webhooks.md 2.9, 3). */
export const approvedAtOnce = (report: CompletionReport) => !report.requiresApproval && report.isAutoApproved;

/**
 * Completion reports (webhooks.md 2.9): for an incomplete work order, one waiting for approval at a time. The
 * approval (or the sender's auto-approval) completes the work order; see report-approval.ts.
 */
export const completionReports = new RecordService<CompletionReport, CompletionReportRecord, CompletionReportCreate & ApprovalDue>({
  entity: CompletionReport,
  label: 'Completion report',
  wire: {
    ...reportFields<CompletionReport>(),
    completion_summary: 'completionSummary',
    scope_checklist: { read: (r) => (r as CompletionReport).scopeChecklist, write: (r, value) => void (r.scopeChecklist = checklist(value)) },
    completion_checklist: { read: (r) => (r as CompletionReport).completionChecklist, write: (r, value) => void (r.completionChecklist = checklist(value)) },
    requires_approval: 'requiresApproval',
  },
  populate: REPORT_EVENT_RELATIONS,
  prepare: (input) => ({ ...input, report_date: input.report_date ?? new Date().toISOString().slice(0, 10) }),
  async check(em, report) {
    await lockNaturalKey(em, report.workOrder.id, 'completion_reports');
    const workOrder = await em.findOneOrFail(WorkOrder, report.workOrder.id);
    if (!INCOMPLETE_STATUSES.includes(workOrder.status)) {
      throw new ApiError('CONFLICT', `Work order ${workOrder.workOrderNumber} is ${workOrder.status}: only an incomplete work order takes a completion report`, {
        field: 'work_order_id',
        reason: `work order is ${workOrder.status}`,
      });
    }
    if ((await em.count(CompletionReport, { workOrder, approvalStatus: 'pending' })) > 0) {
      throw new ApiError('CONFLICT', `Work order ${workOrder.workOrderNumber} already has a completion report waiting for approval`, {
        field: 'work_order_id',
        reason: 'a completion report is waiting for approval',
      });
    }
  },
  async beforeInsert(_em, report) {
    settleApproval(report, 'completion', approvedAtOnce(report));
  },
  events: {
    created: (report) => ({ key: 'report.completion_submitted', payload: { a: completionSubmittedData(report) } }),
  },
});
