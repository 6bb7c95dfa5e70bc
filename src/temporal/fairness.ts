import type { Priority } from '@temporalio/common';

/**
 * The priority a company's runs start with: its id as the fairness key, so on a task queue with fairness on
 * (docs/operations.md, "Task queues and fairness") each company with a backlog gets its turn, in proportion to its
 * weight (1.0 for all), instead of waiting behind another company's backlog. Activities inherit it from their run.
 * Where fairness is off the key is ignored and the queue is FIFO.
 */
export const fairnessOf = (companyId: string): Priority => ({ fairnessKey: companyId });
