import { v7 as uuidv7 } from 'uuid';
import { actorOf } from '../../domain/accounts/actor';
import { writeScope } from '../../domain/accounts/scopes';
import { runProjectClosing } from '../../domain/work/project-closing';
import { runProjectCreation } from '../../domain/work/project-creation';
import type { EmployeeRef } from '../../../workflows/project-creation.contract';
import { PROJECT_STATUSES } from '../../domain/work/project.entity';
import { projects } from '../../domain/work/projects';
import { ApiError } from '../../errors';
import type { ProjectClose, ProjectCreate } from '../../generated/schemas';
import type { AppDeps } from '../context';
import type { RouteSpec } from '../routes/route-spec';
import { byId, byText, byValue } from './filters';
import { defineResource } from './resource';

const SCHEMA = 'rest/projects.json#/$defs';

const employee = (field: string, id: string | null | undefined): EmployeeRef | null => (id ? { field, id } : null);

/** POST /projects and POST /projects/{id}/close: the workflows inbound project.created and project.closed run. */
function projectWorkflowRoutes({ workflows, config }: AppDeps): RouteSpec[] {
  const common = { tag: 'projects', scope: writeScope('projects'), record: 'Project' };
  return [
    {
      ...common,
      method: 'POST',
      path: '/projects',
      summary: 'Create a project',
      description:
        'Runs the projectCreation workflow, as inbound project.created does: the customer by customer_id, or given as customer (found by name or created); the location likewise under it; contacts found or created. Waits up to INBOUND_WAIT_MS; a creation still running then answers 202.',
      body: { schema: `${SCHEMA}/create` },
      responses: {
        201: { description: 'The project created; Location names it', schema: `${SCHEMA}/record` },
        202: { description: 'Accepted and still being created; it will have this id', schema: `${SCHEMA}/pending` },
      },
      async handler(ctx) {
        const body = ctx.request.body as ProjectCreate;
        const { customer, customer_id, location, location_id, contacts, contact_ids, account_manager_id, internal_manager_id, ...project } = body;
        if (!customer === !customer_id) throw ApiError.invalid('customer_id', 'or customer (one of the two) must name the customer');
        if (!location === !location_id) throw ApiError.invalid('location_id', 'or location (one of the two) must name the location');
        const actor = actorOf(ctx.state.principal);
        const outcome = await runProjectCreation(
          workflows,
          {
            actor,
            eventId: uuidv7(),
            projectId: uuidv7(),
            project,
            customer: customer_id ? { id: customer_id } : customer!,
            location: location_id ? { id: location_id } : location!,
            contacts: contacts ?? [],
            contactIds: contact_ids ?? [],
            accountManager: employee('account_manager_id', account_manager_id),
            internalManager: employee('internal_manager_id', internal_manager_id),
          },
          config.inboundWaitMs,
        );
        if (outcome.state === 'running') {
          ctx.status = 202;
          ctx.body = { id: outcome.projectId, project_code: body.project_code, message: `Still being created (workflow ${outcome.workflowId})` };
          return;
        }
        ctx.status = 201;
        ctx.set('Location', `${ctx.path}/${outcome.result.projectId}`);
        ctx.body = await projects.get(ctx.state.em, actor.companyId, outcome.result.projectId);
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/projects/{id}/close',
      summary: 'Close a project',
      description:
        'Runs the projectClosing workflow, as inbound project.closed does: refused (409, naming them) while work orders are incomplete, unless close_work_orders is true, which closes them first.',
      body: { schema: `${SCHEMA}/close`, optional: true },
      responses: {
        200: { description: 'The project, closed', schema: `${SCHEMA}/record` },
        202: { description: 'The closing is still running', schema: `${SCHEMA}/record` },
      },
      async handler(ctx) {
        const { close_work_orders } = ctx.request.body as ProjectClose;
        const actor = actorOf(ctx.state.principal);
        const project = await projects.get(ctx.state.em, actor.companyId, ctx.params.id!);
        const input = { actor, eventId: uuidv7(), projectId: project.id, projectCode: project.project_code, closeWorkOrders: close_work_orders ?? false };
        const outcome = await runProjectClosing(workflows, input, config.inboundWaitMs);
        ctx.status = outcome.state === 'running' ? 202 : 200;
        ctx.body = await projects.get(ctx.state.em, actor.companyId, project.id);
      },
    },
  ];
}

export const projectsResource = defineResource({
  collection: 'projects',
  label: 'Project',
  plural: 'projects',
  description: 'Construction projects (rest-api.md 2.1). Created and closed by workflows; deleting one deletes its work orders.',
  schema: 'rest/projects.json',
  service: {
    list: projects.list.bind(projects),
    get: projects.get.bind(projects),
    update: projects.update.bind(projects),
    remove: projects.remove.bind(projects),
  },
  filters: [
    byValue('status', 'status', PROJECT_STATUSES, 'Projects in this status.'),
    byId('customer_id', 'customer', 'Projects of this customer.'),
    byId('location_id', 'location', 'Projects at this location.'),
    byText('project_code', 'projectCode', 'The project with this code (ignoring case).'),
  ],
  extraRoutes: projectWorkflowRoutes,
});
