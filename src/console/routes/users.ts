import type { AppDeps } from '../../api/context';
import type { ConsolePage } from '../context';
import { clearCookie, fieldOf, formRefusal, redirectWithFlash, SESSION_COOKIE, sendPage, text } from '../http';
import { CONSOLE_ROLES, type ConsoleRole } from '../users/console-user.entity';
import { changePassword, changeRole, createUser, getUser, listUsers, removeUser } from '../users/users-service';
import { accountPage, createdUserPage, newUserPage, removeUserPage, usersPage } from '../views/users';
import { ApiError } from '../../errors';

const roleOf = (value: string): ConsoleRole => {
  if (!CONSOLE_ROLES.includes(value as ConsoleRole)) throw ApiError.invalid('role', `must be ${CONSOLE_ROLES.join(' or ')}`, 'Choose a role: admin or viewer.');
  return value as ConsoleRole;
};

/** Users of the company (admins only), and each user's own account page. */
export function userPages({ config }: AppDeps): ConsolePage[] {
  return [
    {
      method: 'GET',
      path: '/users',
      role: 'admin',
      async handler(ctx, session) {
        sendPage(ctx, usersPage(session, await listUsers(ctx.state.em, session.user.companyId)));
      },
    },
    {
      method: 'GET',
      path: '/users/new',
      role: 'admin',
      async handler(ctx, session) {
        sendPage(ctx, newUserPage(session, { email: '', name: '', role: 'viewer' }));
      },
    },
    {
      method: 'POST',
      path: '/users',
      role: 'admin',
      async handler(ctx, session) {
        const form = { email: text(ctx.state.form, 'email'), name: text(ctx.state.form, 'name'), role: text(ctx.state.form, 'role') };
        try {
          const { user, password } = await createUser(ctx.state.em, { companyId: session.user.companyId, email: form.email, name: form.name, role: roleOf(form.role) });
          ctx.state.log.info({ console: 'user added', userId: session.user.id, addedUserId: user.id }, 'console action');
          sendPage(ctx, createdUserPage(session, user, password));
        } catch (error) {
          const refusal = formRefusal(error);
          sendPage(ctx, newUserPage(session, { ...form, error: refusal.message, errors: { [fieldOf(refusal)]: refusal.message } }), refusal.status);
        }
      },
    },
    {
      method: 'POST',
      path: '/users/:id/role',
      role: 'admin',
      async handler(ctx, session) {
        const role = roleOf(text(ctx.state.form, 'role'));
        const user = await getUser(ctx.state.em, session.user.companyId, ctx.params.id!);
        await changeRole(ctx.state.em, session.user.companyId, user.id, role);
        ctx.state.log.info({ console: 'role changed', userId: session.user.id, changedUserId: user.id, role }, 'console action');
        await redirectWithFlash(ctx, session, '/console/users', `${user.email} is now ${role}.`);
      },
    },
    {
      method: 'GET',
      path: '/users/:id/remove',
      role: 'admin',
      async handler(ctx, session) {
        sendPage(ctx, removeUserPage(session, await getUser(ctx.state.em, session.user.companyId, ctx.params.id!)));
      },
    },
    {
      method: 'POST',
      path: '/users/:id/remove',
      role: 'admin',
      async handler(ctx, session) {
        const user = await getUser(ctx.state.em, session.user.companyId, ctx.params.id!);
        await removeUser(ctx.state.em, session.user.companyId, user.id);
        ctx.state.log.info({ console: 'user removed', userId: session.user.id, removedUserId: user.id }, 'console action');
        if (user.id === session.user.id) {
          clearCookie(ctx, config, SESSION_COOKIE);
          ctx.status = 303;
          return ctx.redirect('/console/login');
        }
        await redirectWithFlash(ctx, session, '/console/users', `${user.email} is removed.`);
      },
    },
    {
      method: 'GET',
      path: '/account',
      role: 'viewer',
      async handler(ctx, session) {
        sendPage(ctx, accountPage(session));
      },
    },
    {
      method: 'POST',
      path: '/account/password',
      role: 'viewer',
      async handler(ctx, session) {
        const { form, em } = ctx.state;
        try {
          if (text(form, 'new_password') !== text(form, 'confirm_password')) {
            throw ApiError.invalid('confirm_password', 'does not match', 'The two new passwords are not the same.');
          }
          const user = await getUser(em, session.user.companyId, session.user.id);
          await changePassword(em, user, text(form, 'current_password'), text(form, 'new_password'), session.tokenHash);
        } catch (error) {
          const refusal = formRefusal(error);
          return sendPage(ctx, accountPage(session, { error: refusal.message, errors: { [fieldOf(refusal)]: refusal.message } }), refusal.status);
        }
        await redirectWithFlash(ctx, session, '/console/account', 'Your password is changed; your other sessions have ended.');
      },
    },
  ];
}
