import { v7 as uuidv7 } from 'uuid';
import { actorOf } from '../../../domain/accounts/actor';
import { readScope, TIMESHEETS_PROCESS_SCOPE } from '../../../domain/accounts/scopes';
import { getPayrollRun, listPayrollRuns, runPayroll } from '../../../domain/time/payroll-runs';
import type { PayrollRunCreate } from '../../../generated/schemas';
import type { AppDeps } from '../../context';
import { listBody, PAGE_PARAMS, pageOf } from '../../pagination';
import type { RouteSpec } from '../route-spec';

const RUN = 'rest/payroll-runs.json#/$defs/record';

/** Payroll batch processing (webhooks.md 3): run a period's payroll, and follow the runs. */
export function payrollRunRoutes({ workflows, config }: AppDeps): RouteSpec[] {
  return [
    {
      method: 'POST',
      path: '/payroll-runs',
      tag: 'payroll-runs',
      scope: TIMESHEETS_PROCESS_SCOPE,
      summary: 'Run payroll for a period',
      description:
        'Processes every timesheet of the period (timesheet_date from period_start to period_end) that is locked, as the payrollRun workflow ' +
        '(id payroll/<company id>/<period_start>/<period_end>): timesheet.processed per timesheet, then one timesheets.processed.batch with ' +
        'total_count (none when nothing was locked). A request while the period runs joins that run; one after it finished starts a new run, ' +
        'which processes what has been locked since. Answers 200 with the run when it finishes within INBOUND_WAIT_MS, else 202 (it finishes on its own).',
      body: { schema: 'rest/payroll-runs.json#/$defs/create' },
      responses: {
        200: { description: 'The run, completed', schema: RUN },
        202: { description: 'Accepted and still running: GET /payroll-runs/{id} follows it', schema: 'rest/payroll-runs.json#/$defs/accepted' },
      },
      async handler(ctx) {
        const body = ctx.request.body as PayrollRunCreate;
        const outcome = await runPayroll(
          workflows,
          { actor: actorOf(ctx.state.principal), runId: uuidv7(), periodStart: body.period_start, periodEnd: body.period_end },
          config.inboundWaitMs,
        );
        if (outcome.state === 'completed') {
          ctx.body = await getPayrollRun(ctx.state.em, ctx.state.principal.companyId, outcome.result.runId);
        } else {
          ctx.status = 202;
          ctx.body = { id: outcome.runId, status: 'running', workflow_id: outcome.workflowId };
        }
        ctx.set('Location', `/api/v1/payroll-runs/${(ctx.body as { id: string }).id}`);
      },
    },
    {
      method: 'GET',
      path: '/payroll-runs',
      tag: 'payroll-runs',
      scope: readScope('timesheets'),
      summary: 'List payroll runs',
      description: 'Newest first.',
      query: [...PAGE_PARAMS],
      responses: { 200: { description: 'A page of payroll runs', listOf: RUN } },
      async handler(ctx) {
        const page = pageOf(ctx.state.query);
        const { items, total, next } = await listPayrollRuns(ctx.state.em, ctx.state.principal.companyId, page);
        ctx.body = listBody(items, total, page, next);
      },
    },
    {
      method: 'GET',
      path: '/payroll-runs/{id}',
      tag: 'payroll-runs',
      record: 'Payroll run',
      scope: readScope('timesheets'),
      summary: 'Get a payroll run',
      responses: { 200: { description: 'The run, with the timesheets it processed', schema: RUN } },
      async handler(ctx) {
        ctx.body = await getPayrollRun(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!);
      },
    },
  ];
}
