import { addSkill, listSkills, removeSkill, skillRecord } from '../../domain/people/skills-service';
import type { SkillCreate } from '../../generated/schemas';
import { byText } from './filters';
import { defineResource } from './resource';

export const skillsResource = defineResource({
  collection: 'skills',
  label: 'Skill',
  plural: 'skills',
  description: "The company's skill library: employee_skills of employee operations must name its entries (case-insensitively).",
  schema: 'rest/skills.json',
  listOrder: 'Alphabetical',
  service: {
    list: listSkills,
    create: async (em, actor, input: SkillCreate) => skillRecord(await addSkill(em, actor.companyId, input.name)),
    remove: (em, actor, id) => removeSkill(em, actor.companyId, id),
  },
  filters: [byText('name', 'name', 'The skill with this name (ignoring case).')],
});
