import Router from '@koa/router';
import { readScope, writeScope } from '../../../domain/accounts/scopes';
import type { Skill } from '../../../domain/people/skill.entity';
import { addSkill, listSkills, removeSkill } from '../../../domain/people/skills-service';
import type { AppDeps, AppState } from '../../context';
import { requireScope } from '../../middleware/authenticate';
import { listBody, parsePage } from '../../pagination';
import { recordId } from '../../record-id';

/** The company's skill library: employee_skills of inbound employee operations must name its entries. */
export function skillJson(skill: Pick<Skill, 'id' | 'name' | 'createdAt'>) {
  return { id: skill.id, name: skill.name, created_at: skill.createdAt.toISOString() };
}

export function skillsRoutes({ validator }: AppDeps): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/skills', requireScope(readScope('skills')), async (ctx) => {
    const page = parsePage(ctx.query);
    const { items, total } = await listSkills(ctx.state.em, ctx.state.principal.companyId, page);
    ctx.body = listBody(items.map(skillJson), total, page);
  });

  router.post('/skills', requireScope(writeScope('skills')), async (ctx) => {
    const body = validator.validate<{ name: string }>('rest/skill.create.json', ctx.request.body);
    const skill = await addSkill(ctx.state.em, ctx.state.principal.companyId, body.name);
    ctx.status = 201;
    ctx.set('Location', `${ctx.path}/${skill.id}`);
    ctx.body = skillJson(skill);
  });

  router.delete('/skills/:id', requireScope(writeScope('skills')), async (ctx) => {
    await removeSkill(ctx.state.em, ctx.state.principal.companyId, recordId(ctx.params.id, 'Skill'));
    ctx.status = 204;
  });

  return router;
}
