import Router from '@koa/router';
import { actorOf } from '../../../domain/accounts/actor';
import { readScope, writeScope } from '../../../domain/accounts/scopes';
import type { WorkOrder } from '../../../domain/work/work-order.entity';
import { createWorkOrder, getWorkOrder } from '../../../domain/work/work-orders-service';
import type { AppDeps, AppState } from '../../context';
import { requireScope } from '../../middleware/authenticate';
import { recordId } from '../../record-id';

/** Body of POST /work-orders (schemas/rest/work-order.create.json). */
interface WorkOrderCreateBody {
  title: string;
  project_id: string;
  assigned_to?: string[];
  scheduled_start?: string;
  scheduled_end?: string;
  priority?: string;
}

/** REST representation: the create body's fields plus what the service assigns. Assignees must be loaded. */
export function workOrderJson(workOrder: WorkOrder) {
  return {
    id: workOrder.id,
    work_order_number: workOrder.workOrderNumber,
    title: workOrder.title,
    project_id: workOrder.project.id,
    assigned_to: workOrder.assignees.getItems().map((e) => e.id),
    scheduled_start: workOrder.scheduledStart?.toISOString() ?? null,
    scheduled_end: workOrder.scheduledEnd?.toISOString() ?? null,
    priority: workOrder.priority,
    status: workOrder.status,
    created_at: workOrder.createdAt.toISOString(),
    updated_at: workOrder.updatedAt.toISOString(),
  };
}

export function workOrdersRoutes({ validator }: AppDeps): Router<AppState> {
  const router = new Router<AppState>();

  router.post('/work-orders', requireScope(writeScope('work-orders')), async (ctx) => {
    const body = validator.validate<WorkOrderCreateBody>('rest/work-order.create.json', ctx.request.body);
    const workOrder = await createWorkOrder(ctx.state.em, actorOf(ctx.state.principal), {
      title: body.title,
      projectId: body.project_id,
      assigneeIds: body.assigned_to ?? [],
      scheduledStart: body.scheduled_start ? new Date(body.scheduled_start) : null,
      scheduledEnd: body.scheduled_end ? new Date(body.scheduled_end) : null,
      priority: body.priority,
    });
    ctx.status = 201;
    ctx.set('Location', `${ctx.path}/${workOrder.id}`);
    ctx.body = workOrderJson(workOrder);
  });

  router.get('/work-orders/:id', requireScope(readScope('work-orders')), async (ctx) => {
    const workOrder = await getWorkOrder(ctx.state.em, ctx.state.principal.companyId, recordId(ctx.params.id, 'Work order'));
    ctx.body = workOrderJson(workOrder);
  });

  return router;
}
