import { ApiError } from '../../errors';
import { dailySubmittedData } from './report-events';
import type { DailyReportCreate, DailyReport as DailyReportRecord } from '../../generated/schemas';
import { lockNaturalKey } from '../natural-keys';
import { RecordService } from '../records/record-service';
import { WorkOrder } from '../work/work-order.entity';
import { DailyReport } from './report.entity';
import { type ApprovalDue, REPORT_EVENT_RELATIONS, reportFields, settleApproval } from './report-fields';

/**
 * Daily reports (webhooks.md 2.9): one per work order and day (a rejected one may be sent again). Each waits
 * for approval unless is_auto_approved; they are created and decided through report-approval.ts.
 */
export const dailyReports = new RecordService<DailyReport, DailyReportRecord, DailyReportCreate & ApprovalDue>({
  entity: DailyReport,
  label: 'Daily report',
  wire: {
    ...reportFields<DailyReport>(),
    notes: 'notes',
    work_completed: 'workCompleted',
    materials_used: 'materialsUsed',
    weather_conditions: 'weatherConditions',
    safety_incidents: 'safetyIncidents',
    hours_worked: 'hoursWorked',
    crew_count: 'crewCount',
  },
  populate: REPORT_EVENT_RELATIONS,
  async check(em, report) {
    // One writer per work order and day; the partial unique index is the last word.
    await lockNaturalKey(em, report.workOrder.id, 'daily_reports', report.reportDate);
    const existing = await em.count(DailyReport, { workOrder: report.workOrder.id, reportDate: report.reportDate, approvalStatus: { $ne: 'rejected' } });
    if (existing > 0) throw ApiError.conflict('report_date', `The work order already has a daily report for ${report.reportDate}`);
  },
  async beforeInsert(em, report) {
    if (report.crewCount === null || report.crewCount === undefined) {
      const workOrder = await em.findOneOrFail(WorkOrder, report.workOrder.id, { populate: ['assignees'] });
      const people = new Set([...workOrder.assignees.getItems().map((e) => e.id), ...(workOrder.siteLead ? [workOrder.siteLead.id] : [])]);
      report.crewCount = people.size;
    }
    settleApproval(report, 'daily', report.isAutoApproved);
  },
  events: {
    created: (report) => ({ key: 'report.daily_submitted', payload: { a: dailySubmittedData(report) } }),
  },
});
