import type { Employee } from '../people/employee.entity';
import type { ChecklistItem, CompletionReport, DailyReport, Report } from './report.entity';
import type { ReportCompletionApprovedData, ReportCompletionSubmittedData, ReportDailySubmittedData } from '../../generated/schemas';

/*
 * Report events (6.1 report.*). They read the report with its work order, the work order's project, and the
 * employees it names loaded. The service has no user accounts, so user_id is always null.
 */

/** A checklist item is done when its status says completed (or complete, the work order scope's word). */
export const isDone = (item: ChecklistItem) => ['completed', 'complete'].includes(item.status.trim().toLowerCase());

const employeeRef = (employee: Employee | null) => employee && { user_id: null, employee_id: employee.id, name: employee.name };

function about(report: Report) {
  const workOrder = report.workOrder.getEntity();
  return {
    report_id: report.id,
    work_order_id: workOrder.id,
    work_order_number: workOrder.workOrderNumber,
    phase_name: workOrder.title,
    project_name: workOrder.project.getEntity().name,
  };
}

export const dailySubmittedData = (report: DailyReport): ReportDailySubmittedData => ({
  ...about(report),
  report_date: report.reportDate,
  report_type: 'daily',
  submitted_by: employeeRef(report.submittedBy?.getEntity() ?? null),
  notes: report.notes,
  weather: report.weatherConditions,
  crew_count: report.crewCount,
  hours_worked: report.hoursWorked,
  photos: report.photos,
  is_auto_approved: report.isAutoApproved,
  submitted_at: report.createdAt.toISOString(),
});

export function completionSubmittedData(report: CompletionReport): ReportCompletionSubmittedData {
  const scope = report.scopeChecklist;
  return {
    ...about(report),
    report_date: report.reportDate,
    report_type: 'completion',
    submitted_by: employeeRef(report.submittedBy?.getEntity() ?? null),
    notes: report.completionSummary,
    scope_checklist: {
      items: scope.map((item) => ({ title: item.item_name, completed: isDone(item) })),
      completion_percentage: scope.length ? Math.round((scope.filter(isDone).length / scope.length) * 10000) / 100 : null,
    },
    completion_checklist: { items: report.completionChecklist.map((item) => ({ item: item.item_name, completed: isDone(item), notes: item.notes })) },
    photos: report.photos,
    requires_approval: report.requiresApproval,
    is_auto_approved: report.isAutoApproved,
    submitted_at: report.createdAt.toISOString(),
  };
}

/** `role` is the approving employee's role name. */
export function completionApprovedData(report: CompletionReport): ReportCompletionApprovedData {
  const approver = report.decidedBy?.getEntity() ?? null;
  return {
    ...about(report),
    approved_by: approver && { ...employeeRef(approver)!, role: approver.role?.getEntity().name ?? null },
    approval_notes: report.decisionNotes,
    approved_at: report.decidedAt!.toISOString(),
  };
}
