import { v7 as uuidv7 } from 'uuid';
import { actorOf } from '../../domain/accounts/actor';
import { REPORTS_APPROVE_SCOPE, writeScope } from '../../domain/accounts/scopes';
import { APPROVAL_STATUSES } from '../../domain/reporting/report.entity';
import { assertEmployee } from '../../domain/people/employees';
import { decideReport, submitReport } from '../../domain/reporting/report-approval';
import type { ReportKind } from '../../../workflows/report-approval.contract';
import type { ReportApprove, ReportReject } from '../../generated/schemas';
import type { ApprovalRuntime } from '../../domain/workflow-gateway';
import type { AppDeps } from '../context';
import type { RouteSpec } from '../routes/route-spec';
import { byDate, byId, byValue, type Filter } from './filters';

export const approvalRuntime = ({ workflows, config }: AppDeps): ApprovalRuntime => ({
  workflows,
  deadlineMs: config.reportApprovalDeadlineMs,
  waitMs: config.inboundWaitMs,
});

/** The list filters of daily and completion reports. */
export const REPORT_FILTERS: Filter[] = [
  byId('work_order_id', 'workOrder', 'Reports on this work order.'),
  { param: byId('project_id', 'workOrder.project', "Reports on this project's work orders.").param, where: (id) => ({ workOrder: { project: id } }) },
  byDate('date_from', 'Reports of this day or later.', (date) => ({ reportDate: { $gte: date } })),
  byDate('date_to', 'Reports of this day or earlier.', (date) => ({ reportDate: { $lte: date } })),
  byValue('approval_status', 'approvalStatus', APPROVAL_STATUSES, 'Reports in this approval status.'),
];

/**
 * Submitting a report (POST, which starts its approval workflow when it needs one) and deciding on it: approve
 * and reject, signalled to that workflow. A decision is answered 200 once applied, or 202 when no worker has
 * applied it within INBOUND_WAIT_MS (it is kept, and applied when one runs).
 */
export function reportRoutes(kind: ReportKind, deps: AppDeps): RouteSpec[] {
  const collection = kind === 'daily' ? 'daily-reports' : 'completion-reports';
  const label = kind === 'daily' ? 'Daily report' : 'Completion report';
  const schema = `rest/${collection}.json#/$defs`;
  const runtime = approvalRuntime(deps);
  const common = { tag: collection, record: label };
  const completes = kind === 'completion' ? ' and completes its work order (report.completion_approved, work_order.status_changed, workorder.completed)' : '';
  /** Approve or reject: the deciding employee, when named, must exist; 200 once applied, else 202. */
  const decide = async (ctx: Parameters<RouteSpec['handler']>[0], choice: { approve: boolean; employeeId: string | null; employeeField: string; notes: string | null }) => {
    const actor = actorOf(ctx.state.principal);
    await assertEmployee(ctx.state.em, actor.companyId, choice.employeeId, choice.employeeField);
    const decision = { approve: choice.approve, actor, employeeId: choice.employeeId, notes: choice.notes, eventId: uuidv7() };
    const outcome = await decideReport(ctx.state.em, runtime, kind, ctx.params.id!, decision);
    ctx.status = outcome.applied ? 200 : 202;
    ctx.body = outcome.record;
  };
  const decided = { 200: { description: `The ${label.toLowerCase()}, decided`, schema: `${schema}/record` }, 202: { description: 'The decision is kept and applied as soon as a worker runs', schema: `${schema}/record` } };
  return [
    {
      ...common,
      method: 'POST',
      path: `/${collection}`,
      scope: writeScope(collection),
      summary: `Submit a ${label.toLowerCase()}`,
      description:
        kind === 'daily'
          ? 'Emits report.daily_submitted. Waits for approval (a reportApproval workflow) unless is_auto_approved is true.'
          : 'Emits report.completion_submitted. With requires_approval false and is_auto_approved true the work order is completed at once; otherwise the report waits for approval (a reportApproval workflow).',
      body: { schema: `${schema}/create` },
      responses: { 201: { description: `The ${label.toLowerCase()}; Location names it`, schema: `${schema}/record` } },
      async handler(ctx) {
        const record = await submitReport(ctx.state.em, runtime, actorOf(ctx.state.principal), kind, ctx.request.body as never, uuidv7());
        ctx.status = 201;
        ctx.set('Location', `${ctx.path}/${record.id}`);
        ctx.body = record;
      },
    },
    {
      ...common,
      method: 'POST',
      path: `/${collection}/{id}/approve`,
      scope: REPORTS_APPROVE_SCOPE,
      summary: `Approve a ${label.toLowerCase()}`,
      description: `Approves a pending report${completes}. A report that is not pending is a 409 naming its status.`,
      body: { schema: 'rest/daily-reports.json#/$defs/approve', optional: true },
      responses: decided,
      async handler(ctx) {
        const { approved_by_id = null, approval_notes = null } = ctx.request.body as ReportApprove;
        await decide(ctx, { approve: true, employeeId: approved_by_id, employeeField: 'approved_by_id', notes: approval_notes });
      },
    },
    {
      ...common,
      method: 'POST',
      path: `/${collection}/{id}/reject`,
      scope: REPORTS_APPROVE_SCOPE,
      summary: `Reject a ${label.toLowerCase()}`,
      description: `Rejects a pending report; no event, and ${kind === 'daily' ? 'a new report for the day may be sent' : 'the work order stays as it is (a new completion report may be sent)'}. A report that is not pending is a 409 naming its status.`,
      body: { schema: 'rest/daily-reports.json#/$defs/reject', optional: true },
      responses: decided,
      async handler(ctx) {
        const { rejected_by_id = null, reason = null } = ctx.request.body as ReportReject;
        await decide(ctx, { approve: false, employeeId: rejected_by_id, employeeField: 'rejected_by_id', notes: reason });
      },
    },
  ];
}
