/**
 * What the domain asks of the workflow engine, in its own terms: src/temporal/temporal-workflows.ts does it with
 * Temporal. The domain knows workflows by their type name and input, never by their code.
 */

/** The search attributes a run is found by in the Temporal UI (workflows/search-attributes.ts). */
export interface WorkflowLabels {
  companyId: string;
  /** The inbound operation or event the run carries out, e.g. project.created. */
  eventType: string;
  /** The natural key of the record, e.g. a project code. */
  recordKey: string;
  approvalStatus?: 'pending';
}

/**
 * A run to start, under an id the caller derives from the request (so a repeat finds the same run) on the
 * service's task queue.
 */
export interface WorkflowStart {
  workflowType: string;
  workflowId: string;
  input: unknown;
  /** A run with this id is open: join it, or refuse (WorkflowAlreadyStarted). */
  whenOpen: 'join' | 'refuse';
  /** Closed runs with this id: a new run may start after any, or only after a failed one. */
  afterClosed: 'start' | 'start_if_failed';
  memo?: Record<string, unknown>;
  labels: WorkflowLabels;
  summary: string;
  details?: string;
}

/** The run's result when it finished in time; else its memo (the run may be another request's). */
export type WorkflowOutcome<R> = { finished: true; result: R } | { finished: false; memo: Record<string, unknown> };

/** A message to a run: a signal or an update, by name. */
export interface WorkflowMessage {
  name: string;
  args: unknown[];
}

/** A run with this id is open and the start refuses it, or one closed and may not start again (another request ended it). */
export class WorkflowAlreadyStarted extends Error {}

/**
 * Starting and talking to workflows. Every method starts the run when none is open, so an operator who
 * terminated one does not lose the request. A run that fails with a business error is thrown as that ApiError.
 */
export interface WorkflowGateway {
  start(start: WorkflowStart): Promise<void>;
  /** Starts (or joins) the run and waits up to `waitMs` for its result. */
  startAndAwait<R>(start: WorkflowStart, waitMs: number): Promise<WorkflowOutcome<R>>;
  /** Signals the run (starting it first when none is open) and waits up to `waitMs` for its result. */
  signalAndAwait<R>(start: WorkflowStart, signal: WorkflowMessage, waitMs: number): Promise<WorkflowOutcome<R>>;
  /** Sends an update (starting the run first when none is open); null when it was not answered within `waitMs`. */
  update<R>(start: WorkflowStart, update: WorkflowMessage, waitMs: number): Promise<{ result: R } | null>;
  schedules: ScheduleGateway;
}

/** A Temporal Schedule as the domain sees it. */
export interface ScheduleState {
  paused: boolean;
  nextRunAt: string | null;
}

export interface ScheduleDefinition {
  scheduleId: string;
  cron: string;
  timezone: string;
  /** The run each action starts; whenOpen and afterClosed are the schedule's. */
  run: Omit<WorkflowStart, 'whenOpen' | 'afterClosed' | 'details' | 'memo'>;
  note: string;
}

/** The schedule is not there (deleted in the Temporal UI). */
export class ScheduleMissing extends Error {}

/** Temporal refused the schedule's definition as malformed. */
export class ScheduleRefused extends Error {}

/**
 * Schedules of workflows: a run still going when the next is due makes that one skip; a run missed while Temporal
 * was down is made up within a day.
 */
export interface ScheduleGateway {
  create(definition: ScheduleDefinition): Promise<void>;
  /** Null when it is missing. */
  describe(scheduleId: string): Promise<ScheduleState | null>;
  pause(scheduleId: string, note: string): Promise<void>;
  unpause(scheduleId: string, note: string): Promise<void>;
  /** Runs it now, as it would (a paused schedule too). */
  trigger(scheduleId: string): Promise<void>;
  /** Deletes it; one already gone is fine. */
  delete(scheduleId: string): Promise<void>;
}

/** What the domain needs to start approval workflows and send them decisions. */
export interface ApprovalRuntime {
  workflows: WorkflowGateway;
  /** The approval deadline of new approvals; injected so tests wait seconds. */
  deadlineMs: number;
  /** How long a decision waits for its workflow to apply it. */
  waitMs: number;
}
