import { ActivityFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ScheduledReportActivities } from '../activities/scheduled-report';
import type { ScheduledReportInput, ScheduledReportResult } from './scheduled-report.contract';

const steps = proxyActivities<ScheduledReportActivities>({
  startToCloseTimeout: '2 minutes',
  // A few minutes of retries ride out a short outage; past that the run is recorded as failed.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 8 },
});

/**
 * One run of a report schedule (its Temporal Schedule starts it): generates and stores the report
 * (report.generated), or records why it could not (report.failed). The run is known by this workflow's id, so
 * a retried step finds what an earlier attempt stored.
 */
export async function scheduledReport(input: ScheduledReportInput): Promise<ScheduledReportResult> {
  const { workflowId, startTime } = workflowInfo();
  const run = { ...input, workflowId, at: startTime.toISOString() };
  try {
    return await steps.generateScheduledReport(run);
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    return steps.recordScheduledReportFailure(run, (error.cause ?? error).message);
  }
}
