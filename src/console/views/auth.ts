import { html } from '../html';
import { csrfField, errorSummary, field } from './components';
import { layout } from './layout';

export interface LoginView {
  csrfToken: string;
  email?: string;
  next?: string;
  error?: string | null;
  notice?: string | null;
}

export function loginPage(view: LoginView): string {
  return layout({
    title: 'Sign in',
    body: html`
      ${view.notice ? html`<div class="flash" role="status">${view.notice}</div>` : ''}
      ${errorSummary(view.error)}
      <form method="post" action="/console/login" class="narrow">
        ${csrfField(view.csrfToken)}
        ${view.next ? html`<input type="hidden" name="next" value="${view.next}">` : ''}
        ${field({ name: 'email', label: 'Email', type: 'email', value: view.email, required: true, autocomplete: 'username' })}
        ${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password' })}
        <button type="submit" class="button">Sign in</button>
      </form>`,
  });
}
