import { type Html, html, type SafeHtml } from '../html';
import type { Session } from '../users/sessions';

/** The hidden field every POST form of a signed-in user carries (checked by requireCsrf). */
export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

/** A POST form with its CSRF token. */
export const postForm = (session: Session, action: string, content: Html, attributes: Html = '') =>
  html`<form method="post" action="${action}" ${attributes}>${csrfField(session.csrfToken)}${content}</form>`;

/** A time in UTC, machine-readable in `datetime`. */
export function time(date: Date | null | undefined): SafeHtml {
  if (!date) return html`<span class="muted">never</span>`;
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')} UTC</time>`;
}

/** A status as a word (colour only repeats it). */
export const badge = (status: string) => html`<span class="badge badge-${status}">${status}</span>`;

/** The message of a refused form, announced by screen readers when the page loads. */
export const errorSummary = (message: string | null | undefined) =>
  message ? html`<div class="error-summary" role="alert" tabindex="-1" id="error-summary"><h2>There is a problem</h2><p>${message}</p></div>` : '';

export interface FieldOptions {
  name: string;
  label: string;
  value?: string;
  type?: string;
  error?: string | null;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  attributes?: Html;
}

/** A labelled input, its hint and its error tied to it with aria-describedby. */
export function field(o: FieldOptions): SafeHtml {
  const id = `field-${o.name}`;
  const described = [o.hint ? `${id}-hint` : '', o.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field${o.error ? ' field-error' : ''}">
    <label for="${id}">${o.label}</label>
    ${o.hint ? html`<p class="hint" id="${id}-hint">${o.hint}</p>` : ''}
    ${o.error ? html`<p class="error" id="${id}-error">${o.error}</p>` : ''}
    <input id="${id}" name="${o.name}" type="${o.type ?? 'text'}" value="${o.value ?? ''}"${o.required ? html` required` : ''}${
      o.autocomplete ? html` autocomplete="${o.autocomplete}"` : ''
    }${described ? html` aria-describedby="${described}"` : ''}${o.error ? html` aria-invalid="true"` : ''} ${o.attributes ?? ''}>
  </div>`;
}

/** A secret shown once: read-only, selectable, with a copy button that the script reveals. */
export function secretValue(id: string, label: string, value: string): SafeHtml {
  return html`<div class="field secret">
    <label for="${id}">${label}</label>
    <div class="secret-row">
      <input id="${id}" type="text" value="${value}" readonly spellcheck="false" autocomplete="off">
      <button type="button" class="button secondary" data-copy="${id}" hidden>Copy<span class="visually-hidden"> ${label}</span></button>
    </div>
  </div>`;
}

/** A table, or a sentence when there is nothing to list. */
export function table(caption: string, headings: string[], rows: SafeHtml[], empty: string): SafeHtml {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap"><table>
    <caption class="visually-hidden">${caption}</caption>
    <thead><tr>${headings.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
}
