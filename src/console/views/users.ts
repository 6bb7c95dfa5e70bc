import { html } from '../html';
import { CONSOLE_ROLES, type ConsoleUser } from '../users/console-user.entity';
import { PASSWORD_MIN_LENGTH } from '../users/passwords';
import type { Session } from '../users/sessions';
import { errorSummary, field, postForm, secretValue, table, time } from './components';
import { layout } from './layout';

const ROLE_HINTS = { admin: 'manages API keys, webhook endpoints, deliveries and users', viewer: 'reads keys, endpoints, logs and alerts; changes nothing' };

export function usersPage(session: Session, users: ConsoleUser[]): string {
  const rows = users.map(
    (u) => html`<tr>
      <td>${u.email}${u.id === session.user.id ? ' (you)' : ''}</td>
      <td>${u.name}</td>
      <td>${postForm(
        session,
        `/console/users/${u.id}/role`,
        html`<label class="visually-hidden" for="role-${u.id}">Role of ${u.email}</label>
        <select id="role-${u.id}" name="role">${CONSOLE_ROLES.map((r) => html`<option value="${r}"${u.role === r ? html` selected` : ''}>${r}</option>`)}</select>
        <button type="submit" class="button secondary small">Change role<span class="visually-hidden"> of ${u.email}</span></button>`,
        html`class="inline"`,
      )}</td>
      <td>${time(u.createdAt)}</td>
      <td>${time(u.lastSignInAt)}</td>
      <td><a href="/console/users/${u.id}/remove">Remove<span class="visually-hidden"> ${u.email}</span></a></td>
    </tr>`,
  );
  return layout({
    title: 'Users',
    nav: 'users',
    session,
    body: html`
      <p>People who sign in to this console for your company. Admins ${ROLE_HINTS.admin}; viewers ${ROLE_HINTS.viewer}.</p>
      <p><a class="button" href="/console/users/new">Add a user</a></p>
      ${table('Users of your company', ['Email', 'Name', 'Role', 'Added', 'Last sign-in', 'Actions'], rows, 'No users.')}`,
  });
}

export interface NewUserForm {
  email: string;
  name: string;
  role: string;
  error?: string | null;
  errors?: Record<string, string>;
}

export function newUserPage(session: Session, form: NewUserForm): string {
  const radio = (role: (typeof CONSOLE_ROLES)[number]) =>
    html`<div class="check"><input type="radio" id="role-${role}" name="role" value="${role}"${form.role === role ? html` checked` : ''}><label for="role-${role}">${role}: ${ROLE_HINTS[role]}</label></div>`;
  return layout({
    title: 'Add a user',
    nav: 'users',
    session,
    body: postForm(
      session,
      '/console/users',
      html`${errorSummary(form.error)}
      ${field({ name: 'email', label: 'Email', type: 'email', value: form.email, required: true, error: form.errors?.email, autocomplete: 'off' })}
      ${field({ name: 'name', label: 'Name', value: form.name, required: true, error: form.errors?.name, attributes: html`maxlength="100"` })}
      <fieldset><legend>Role</legend>${form.errors?.role ? html`<p class="error">${form.errors.role}</p>` : ''}${CONSOLE_ROLES.map(radio)}</fieldset>
      <p class="hint">A password is generated and shown to you once: hand it over safely; they change it under "Your account".</p>
      <div class="actions"><button type="submit" class="button">Add user</button> <a href="/console/users">Cancel</a></div>`,
      html`class="narrow"`,
    ),
  });
}

export function createdUserPage(session: Session, user: ConsoleUser, password: string): string {
  return layout({
    title: 'User added',
    nav: 'users',
    session,
    body: html`
      <div class="notice" role="status"><p><strong>Copy the password now.</strong> It is shown only this once. ${user.email} can sign in with it as ${user.role} and change it under "Your account".</p></div>
      ${secretValue('user-password', `Password of ${user.email}`, password)}
      <p><a href="/console/users">Back to users</a></p>`,
  });
}

export function removeUserPage(session: Session, user: ConsoleUser): string {
  return layout({
    title: `Remove ${user.email}?`,
    nav: 'users',
    session,
    body: html`
      <p>They can no longer sign in, and their sessions end now.</p>
      ${postForm(session, `/console/users/${user.id}/remove`, html`<div class="actions"><button type="submit" class="button danger">Remove user</button> <a href="/console/users">Cancel</a></div>`)}`,
  });
}

export function accountPage(session: Session, form: { error?: string | null; errors?: Record<string, string> } = {}): string {
  const { user } = session;
  return layout({
    title: 'Your account',
    nav: 'account',
    session,
    body: html`
      <dl class="summary">
        <dt>Email</dt><dd>${user.email}</dd>
        <dt>Name</dt><dd>${user.name}</dd>
        <dt>Role</dt><dd>${user.role}</dd>
        <dt>Company</dt><dd>${user.companyName}</dd>
      </dl>
      <h2>Change your password</h2>
      ${postForm(
        session,
        '/console/account/password',
        html`${errorSummary(form.error)}
        ${field({ name: 'current_password', label: 'Current password', type: 'password', required: true, autocomplete: 'current-password', error: form.errors?.current_password })}
        ${field({ name: 'new_password', label: 'New password', type: 'password', required: true, autocomplete: 'new-password', hint: `At least ${PASSWORD_MIN_LENGTH} characters.`, error: form.errors?.new_password })}
        ${field({ name: 'confirm_password', label: 'New password again', type: 'password', required: true, autocomplete: 'new-password', error: form.errors?.confirm_password })}
        <button type="submit" class="button">Change password</button>`,
        html`class="narrow"`,
      )}`,
  });
}
