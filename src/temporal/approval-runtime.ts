import type { Client } from '@temporalio/client';

/** What the API needs to start approval workflows and send them decisions. */
export interface ApprovalRuntime {
  temporal: Client;
  taskQueue: string;
  /** The approval deadline of new approvals; injected so tests wait seconds. */
  deadlineMs: number;
  /** How long a decision waits for its workflow to apply it. */
  waitMs: number;
}
