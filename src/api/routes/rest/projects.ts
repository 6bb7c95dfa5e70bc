import Router from '@koa/router';
import { readScope } from '../../../domain/accounts/scopes';
import { idOf, type View } from '../../../domain/page';
import type { Project } from '../../../domain/work/project.entity';
import { listProjects } from '../../../domain/work/projects-service';
import type { AppDeps, AppState } from '../../context';
import { requireScope } from '../../middleware/authenticate';
import { listBody, parsePage } from '../../pagination';

/** REST representation (rest-api.md 2.1, plus the project code and a few descriptive fields). */
export function projectJson(project: View<Project>) {
  return {
    id: project.id,
    project_code: project.projectCode,
    name: project.name,
    description: project.description,
    status: project.status,
    priority: project.priority,
    customer_id: idOf(project.customer),
    location_id: idOf(project.location),
    start_date: project.startDate,
    end_date: project.endDate,
    created_at: project.createdAt.toISOString(),
    updated_at: project.updatedAt.toISOString(),
  };
}

export function projectsRoutes(_deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/projects', requireScope(readScope('projects')), async (ctx) => {
    const page = parsePage(ctx.query);
    const { items, total } = await listProjects(ctx.state.em, ctx.state.principal.companyId, page);
    ctx.body = listBody(items.map(projectJson), total, page);
  });
  return router;
}
