import { LockMode, ref } from '@mikro-orm/core';
import { lockNaturalKey } from '../src/domain/natural-keys';
import { Employee } from '../src/domain/people/employee.entity';
import type { ReportApprovalInput, ReportApprovalResult, ReportDecision } from '../workflows/report-approval.contract';
import { CompletionReport, DailyReport } from '../src/domain/reporting/report.entity';
import { REPORT_EVENT_RELATIONS } from '../src/domain/reporting/report-fields';
import { completeWorkOrder } from '../src/domain/work/work-orders';
import { recordEvent } from '../src/events/outbox';
import { completionApprovedData } from '../src/domain/reporting/report-events';
import type { ActivityDeps } from './deps';

const ENTITIES = { daily: DailyReport, completion: CompletionReport } as const;

/**
 * The steps of a report approval. Each is idempotent: a reminder already counted is not logged again, and a
 * decision already applied (only this workflow applies one) is found and answered as it was.
 */
export function createReportApprovalActivities({ orm, logger }: ActivityDeps) {
  return {
    /** Whether the report waits for approval, once the transaction that records it has ended (submitReport holds this lock). */
    async reportAwaitsApproval(input: ReportApprovalInput): Promise<boolean> {
      return orm.em.fork().transactional(async (tx) => {
        await lockNaturalKey(tx, 'report-approval', input.reportId);
        const report = await tx.findOne(ENTITIES[input.kind], { id: input.reportId, company: input.companyId });
        return report?.approvalStatus === 'pending';
      });
    },

    /** Reminder number `reminder` of an overdue approval: counted on the report and logged as an alert. False when the report no longer waits. */
    async remindReportApproval(input: ReportApprovalInput, reminder: number): Promise<boolean> {
      return orm.em.fork().transactional(async (tx) => {
        const report = await tx.findOne(ENTITIES[input.kind], { id: input.reportId, company: input.companyId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (report?.approvalStatus !== 'pending') return false;
        if (report.remindersSent < reminder) {
          report.remindersSent = reminder;
          logger.warn(
            { alert: 'report_approval_overdue', companyId: input.companyId, kind: input.kind, reportId: input.reportId, dueAt: report.approvalDueAt, reminder },
            `${input.kind} report ${input.reportId} is still waiting for approval (reminder ${reminder})`,
          );
        }
        return true;
      });
    },

    /** Applies the decision in one transaction; an approved completion report records report.completion_approved and completes its work order. */
    async decideReport(input: ReportApprovalInput, decision: ReportDecision): Promise<ReportApprovalResult> {
      return orm.em.fork().transactional(async (tx) => {
        const report = await tx.findOne(ENTITIES[input.kind], { id: input.reportId, company: input.companyId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!report) return { outcome: 'cancelled', eventId: null };
        const recordsEvent = decision.approve && report instanceof CompletionReport;
        const eventId = recordsEvent ? decision.eventId : null;
        if (report.approvalStatus !== 'pending') return { outcome: report.approvalStatus as 'approved' | 'rejected', eventId };
        // The employee was checked when the decision was sent; one deleted since is left out.
        const employee = decision.employeeId ? await tx.findOne(Employee, { id: decision.employeeId, company: input.companyId }) : null;
        const outcome = decision.approve ? 'approved' : 'rejected';
        Object.assign(report, {
          approvalStatus: outcome,
          decidedAt: new Date(),
          decidedBy: employee && ref(employee),
          decisionNotes: decision.notes,
        });
        await tx.flush();
        if (recordsEvent) {
          await tx.populate(report, REPORT_EVENT_RELATIONS as never);
          recordEvent(tx, decision.actor, 'report.completion_approved', { a: completionApprovedData(report) }, decision.eventId);
          await completeWorkOrder(tx, decision.actor, report.workOrder.id);
        }
        return { outcome, eventId };
      });
    },
  };
}

export type ReportApprovalActivities = ReturnType<typeof createReportApprovalActivities>;
