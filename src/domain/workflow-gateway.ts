/**
 * What the domain asks of the workflow engine, in its own terms: src/temporal/temporal-workflows.ts does it with
 * Temporal. A workflow is known by its contract (workflows/<name>.contract.ts, declared with ./workflow-contract.ts),
 * so a call with a wrong input, a message the workflow does not take, or wrong arguments does not compile.
 */
import type { ArgsOf, InputOf, ResultOf, SignalOf, UpdateOf, UpdateResultOf, WorkflowDef } from './workflow-contract';

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
 * A run of `workflow` to start, under an id the caller derives from the request (so a repeat finds the same run), on
 * its task queue.
 */
export interface WorkflowStart<W extends WorkflowDef = WorkflowDef> {
  workflow: W;
  workflowId: string;
  input: NoInfer<InputOf<W>>;
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

/** A run with this id is open and the start refuses it, or one closed and may not start again (another request ended it). */
export class WorkflowAlreadyStarted extends Error {}

/**
 * Starting and talking to workflows. Every method starts the run when none is open, so an operator who
 * terminated one does not lose the request. A run that fails with a business error is thrown as that ApiError.
 */
export interface WorkflowGateway {
  start<W extends WorkflowDef>(start: WorkflowStart<W>): Promise<void>;
  /** Starts (or joins) the run and waits up to `waitMs` for its result. */
  startAndAwait<W extends WorkflowDef>(start: WorkflowStart<W>, waitMs: number): Promise<WorkflowOutcome<ResultOf<W>>>;
  /** Signals the run (starting it first when none is open) and waits up to `waitMs` for its result. */
  signalAndAwait<W extends WorkflowDef, S extends SignalOf<W>>(start: WorkflowStart<W>, signal: S, args: NoInfer<ArgsOf<S>>, waitMs: number): Promise<WorkflowOutcome<ResultOf<W>>>;
  /** Sends an update (starting the run first when none is open); null when it was not answered within `waitMs`. */
  update<W extends WorkflowDef, U extends UpdateOf<W>>(start: WorkflowStart<W>, update: U, args: NoInfer<ArgsOf<U>>, waitMs: number): Promise<{ result: UpdateResultOf<U> } | null>;
  schedules: ScheduleGateway;
}

/** A Temporal Schedule as the domain sees it. */
export interface ScheduleState {
  paused: boolean;
  nextRunAt: string | null;
}

export interface ScheduleDefinition<W extends WorkflowDef = WorkflowDef> {
  scheduleId: string;
  cron: string;
  timezone: string;
  /** The run each action starts; whenOpen and afterClosed are the schedule's. */
  run: Omit<WorkflowStart<W>, 'whenOpen' | 'afterClosed' | 'details' | 'memo'>;
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
  create<W extends WorkflowDef>(definition: ScheduleDefinition<W>): Promise<void>;
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
