import type { Actor } from '../src/domain/accounts/actor';
import type { ProjectClosingInput } from '../workflows/project-closing.contract';
import { closeWorkOrderWithProject, incompleteWorkOrders, markProjectClosed, projects } from '../src/domain/work/projects';
import { ApiError } from '../src/errors';
import type { ActivityDeps } from './deps';

export interface ClosingPlan {
  alreadyClosed: boolean;
  /** The work orders to close first, oldest first. */
  workOrderIds: string[];
}

/**
 * The steps of closing a project. Each is idempotent: a work order or project already closed is left as it
 * is and records no event, so a step retried after a crash does its work once.
 */
export function createProjectClosingActivities({ orm }: ActivityDeps) {
  return {
    /** What closing involves; refuses (409, naming them) while work orders are incomplete and may not be closed. */
    async planProjectClosing(input: ProjectClosingInput): Promise<ClosingPlan> {
      const em = orm.em.fork();
      const project = await projects.get(em, input.actor.companyId, input.projectId);
      const incomplete = await incompleteWorkOrders(em, input.actor.companyId, input.projectId);
      if (project.status === 'closed') return { alreadyClosed: true, workOrderIds: [] };
      if (incomplete.length && !input.closeWorkOrders) {
        const list = incomplete.map((w) => `${w.workOrderNumber} (${w.status})`).join(', ');
        throw new ApiError('CONFLICT', `Project ${input.projectCode} has ${incomplete.length} incomplete work order(s): ${list}. Close them first, or send close_work_orders: true.`, {
          field: 'close_work_orders',
          reason: `incomplete work orders: ${incomplete.map((w) => w.workOrderNumber).join(', ')}`,
        });
      }
      return { alreadyClosed: false, workOrderIds: incomplete.map((w) => w.id) };
    },

    async closeWorkOrderWithProject(actor: Actor, workOrderId: string): Promise<boolean> {
      return closeWorkOrderWithProject(orm.em.fork(), actor, workOrderId);
    },

    async markProjectClosed(actor: Actor, projectId: string, eventId: string): Promise<void> {
      await markProjectClosed(orm.em.fork(), actor, projectId, eventId);
    },
  };
}

export type ProjectClosingActivities = ReturnType<typeof createProjectClosingActivities>;
