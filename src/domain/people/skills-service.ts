import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Skill as SkillRecord } from '../../generated/schemas';
import { ApiError } from '../../errors';
import { lockNaturalKey } from '../natural-keys';
import { findPage, type Page } from '../page';
import { Skill } from './skill.entity';

export const skillRecord = (skill: Pick<Skill, 'id' | 'name' | 'createdAt'>): SkillRecord => ({
  id: skill.id,
  name: skill.name,
  created_at: skill.createdAt.toISOString(),
});

/** Alphabetical, unlike other lists: the library is read as a vocabulary. */
export async function listSkills(em: EntityManager, companyId: string, page: Page, where: FilterQuery<Skill> = {}) {
  const found = await findPage(em, Skill, { ...(where as object), company: companyId }, { name: 'asc', id: 'asc' }, page);
  return { ...found, items: found.items.map(skillRecord) };
}

export async function addSkill(em: EntityManager, companyId: string, name: string): Promise<Skill> {
  const trimmed = name.trim();
  return em.transactional(async (tx) => {
    await lockNaturalKey(tx, companyId, 'skill', trimmed);
    const [existing] = await findSkillsByName(tx, companyId, [trimmed]);
    if (existing) throw ApiError.conflict('name', `Skill "${existing.name}" already exists`);
    return tx.create(Skill, { company: companyId, name: trimmed });
  });
}

export async function removeSkill(em: EntityManager, companyId: string, id: string): Promise<void> {
  const deleted = await em.nativeDelete(Skill, { id, company: companyId });
  if (deleted === 0) throw ApiError.notFound('Skill');
}

/** Library entries matching `names` case-insensitively. */
export async function findSkillsByName(em: EntityManager, companyId: string, names: string[]): Promise<Skill[]> {
  if (names.length === 0) return [];
  const rows = await em.execute<{ id: string }[]>(
    `select id from skills
      where company_id = ? and lower(name) in (select lower(trim(n)) from json_array_elements_text(?::json) as n)`,
    [companyId, JSON.stringify(names)],
  );
  return rows.length ? em.find(Skill, { id: { $in: rows.map((r) => r.id) } }) : [];
}
