import type { EntityManager } from '@mikro-orm/postgresql';
import { Company } from '../../domain/accounts/company.entity';
import { ApiError } from '../../errors';
import { type ConsoleRole, ConsoleUser } from './console-user.entity';
import { checkPassword, generatePassword, hashPassword, passwordProblem } from './passwords';
import { endUserSessions } from './sessions';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Emails are kept, and compared, in lower case without surrounding spaces. */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();

export interface NewUser {
  companyId: string;
  email: string;
  name: string;
  role: ConsoleRole;
}

function checkNewUser(input: NewUser): void {
  const email = normaliseEmail(input.email);
  if (email.length > 254 || !EMAIL.test(email)) throw ApiError.invalid('email', 'must be an email address', 'Enter an email address, like name@example.com');
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) throw ApiError.invalid('name', 'must be 1 to 100 characters', 'Enter a name of 1 to 100 characters');
}

/**
 * Adds a console user to a company with a generated password, returned here once (the person changes it
 * after signing in). An email belongs to one user of the whole service.
 */
export async function createUser(em: EntityManager, input: NewUser): Promise<{ user: ConsoleUser; password: string }> {
  checkNewUser(input);
  if (!(await em.findOne(Company, { id: input.companyId }))) throw ApiError.notFound('Company', 'company');
  const email = normaliseEmail(input.email);
  if (await findUserByEmail(em, email)) throw ApiError.conflict('email', `There is already a user with the email ${email}`);
  const password = generatePassword();
  const user = em.create(ConsoleUser, { company: input.companyId, email, name: input.name.trim(), role: input.role, passwordHash: await hashPassword(password) });
  await em.flush();
  return { user, password };
}

export async function findUserByEmail(em: EntityManager, email: string): Promise<ConsoleUser | null> {
  return em.findOne(ConsoleUser, { email: normaliseEmail(email) });
}

export async function listUsers(em: EntityManager, companyId: string): Promise<ConsoleUser[]> {
  return em.find(ConsoleUser, { company: companyId }, { orderBy: { email: 'asc' } });
}

export async function getUser(em: EntityManager, companyId: string, id: string): Promise<ConsoleUser> {
  const user = await em.findOne(ConsoleUser, { id, company: companyId });
  if (!user) throw ApiError.notFound('User');
  return user;
}

/**
 * Runs `change` on a user with the company's admins locked, so two admins demoting or removing each other at
 * once cannot leave the company without one: 409 when `change` would.
 */
async function withAdminsKept(em: EntityManager, companyId: string, id: string, leavesAdmin: (user: ConsoleUser) => boolean, change: (tx: EntityManager, user: ConsoleUser) => void) {
  await em.transactional(async (tx) => {
    const admins = await tx.execute<{ id: string }[]>(`select id from console_users where company_id = ? and role = 'admin' for update`, [companyId]);
    const user = await getUser(tx, companyId, id);
    if (user.role === 'admin' && !leavesAdmin(user) && admins.length === 1) {
      throw new ApiError('CONFLICT', 'A company keeps at least one admin: make another user an admin first', { field: 'role', reason: 'last admin' });
    }
    change(tx, user);
  });
}

export async function changeRole(em: EntityManager, companyId: string, id: string, role: ConsoleRole): Promise<void> {
  await withAdminsKept(em, companyId, id, () => role === 'admin', (_tx, user) => {
    user.role = role;
  });
}

/** Removes a user; their sessions end with them. */
export async function removeUser(em: EntityManager, companyId: string, id: string): Promise<void> {
  await withAdminsKept(em, companyId, id, () => false, (tx, user) => tx.remove(user));
}

/** Changes a user's own password after checking the current one; their other sessions end. */
export async function changePassword(em: EntityManager, user: ConsoleUser, current: string, next: string, keepSessionHash: string): Promise<void> {
  if (!(await checkPassword(user.passwordHash, current)).matches) throw ApiError.invalid('current_password', 'is not your current password', 'Your current password is not correct');
  const problem = passwordProblem(next);
  if (problem) throw ApiError.invalid('new_password', problem, `The new password ${problem}`);
  user.passwordHash = await hashPassword(next);
  await em.flush();
  await endUserSessions(em, user.id, keepSessionHash);
}

/** An operator's reset (CLI): a new generated password, returned once; every session of the user ends. */
export async function resetPassword(em: EntityManager, email: string): Promise<{ user: ConsoleUser; password: string }> {
  const user = await findUserByEmail(em, email);
  if (!user) throw ApiError.notFound('User', 'email');
  const password = generatePassword();
  user.passwordHash = await hashPassword(password);
  await em.flush();
  await endUserSessions(em, user.id);
  return { user, password };
}
