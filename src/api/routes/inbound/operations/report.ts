import type { EntityManager } from '@mikro-orm/postgresql';
import { CompletionReport } from '../../../../domain/reporting/report.entity';
import { decideReport, submitReport } from '../../../../domain/reporting/report-approval';
import { workOrders } from '../../../../domain/work/work-orders';
import { ApiError } from '../../../../errors';
import type { ReportCompletionApprovedInput, ReportCompletionSubmittedInput, ReportDailySubmittedInput } from '../../../../generated/schemas';
import { approvalRuntime } from '../../../resources/report-routes';
import { without } from '../crud-operations';
import { defineOperation } from '../operation';
import { employeeIdByNumber } from '../references';

const SCHEMA = 'inbound/report.json#/$defs';

/** The work order a report is about: a reference, so an unknown number is a 400 naming it. */
async function workOrderIdOf(em: EntityManager, companyId: string, number: string): Promise<string> {
  const id = await workOrders.findIdByKey(em, companyId, [number]);
  if (!id) throw ApiError.invalid('work_order_number', `does not match a work order of your company ("${number}")`);
  return id;
}

/** The report fields of inbound data, in REST's terms (ids for the work order and the submitting employee). */
async function reportFields<D extends { work_order_number: string; submitted_by?: string }>(em: EntityManager, companyId: string, data: D) {
  return {
    ...without(data, 'work_order_number', 'submitted_by'),
    work_order_id: await workOrderIdOf(em, companyId, data.work_order_number),
    ...(data.submitted_by === undefined ? {} : { submitted_by_id: await employeeIdByNumber(em, companyId, data.submitted_by, 'submitted_by') }),
  };
}

export const reportDailySubmitted = defineOperation<ReportDailySubmittedInput>({
  eventType: 'report.daily_submitted',
  schema: `${SCHEMA}/dailySubmitted`,
  summary: "Submits a work order's daily report; it waits for a manager's approval unless is_auto_approved is true.",
  async handle({ data, actor, eventId, em, deps }) {
    const input = await reportFields(em, actor.companyId, data);
    const record = await submitReport(em, approvalRuntime(deps), actor, 'daily', input, eventId);
    const state = record.approval_status === 'approved' ? 'auto-approved' : 'waiting for approval';
    return { message: `Daily report of work order ${data.work_order_number} for ${record.report_date} submitted, ${state}`, recordId: record.id };
  },
});

export const reportCompletionSubmitted = defineOperation<ReportCompletionSubmittedInput>({
  eventType: 'report.completion_submitted',
  schema: `${SCHEMA}/completionSubmitted`,
  summary: 'Submits the completion report of an incomplete work order; it waits for approval unless requires_approval is false and is_auto_approved true, which completes the work order at once.',
  async handle({ data, actor, eventId, em, deps }) {
    const input = await reportFields(em, actor.companyId, data);
    const record = await submitReport(em, approvalRuntime(deps), actor, 'completion', input, eventId);
    const state = record.approval_status === 'approved' ? `approved; work order ${data.work_order_number} is complete` : 'waiting for approval';
    return { message: `Completion report of work order ${data.work_order_number} submitted, ${state}`, recordId: record.id };
  },
});

export const reportCompletionApproved = defineOperation<ReportCompletionApprovedInput>({
  eventType: 'report.completion_approved',
  schema: `${SCHEMA}/completionApproved`,
  summary: 'Approves the completion report of the work order that waits for approval; the work order becomes complete.',
  async handle({ data, actor, eventId, em, deps }) {
    const workOrderId = await workOrders.findIdByKey(em, actor.companyId, [data.work_order_number]);
    if (!workOrderId) throw new ApiError('NOT_FOUND', `Work order "${data.work_order_number}" not found`, { field: 'work_order_number', reason: 'does not exist' });
    const pending = await em.findOne(CompletionReport, { workOrder: workOrderId, approvalStatus: 'pending' }, { fields: ['id'] });
    if (!pending) {
      throw new ApiError('CONFLICT', `Work order ${data.work_order_number} has no completion report waiting for approval`, {
        field: 'work_order_number',
        reason: 'no completion report waiting for approval',
      });
    }
    const employeeId = await employeeIdByNumber(em, actor.companyId, data.approved_by ?? null, 'approved_by');
    const decision = { approve: true, actor, employeeId, notes: data.approval_notes ?? null, eventId };
    const outcome = await decideReport(em, approvalRuntime(deps), 'completion', pending.id, decision);
    if (!outcome.applied) {
      return { status: 202, message: `Approval of the completion report of work order ${data.work_order_number} accepted; it is applied as soon as a worker runs`, recordId: pending.id };
    }
    return { message: `Completion report of work order ${data.work_order_number} approved; the work order is complete`, recordId: pending.id, eventId: outcome.eventId ?? eventId };
  },
});
