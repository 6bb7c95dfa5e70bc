import type { EndpointTransformation, WebhookEndpointTransformationTestResult } from '../../generated/schemas';
import { EVENT_REGISTRY } from '../../events/registry';
import { isSubscribed } from '../../delivery/endpoints/subscriptions';
import { html, type SafeHtml } from '../html';
import { field } from './components';

/**
 * An endpoint's transformation in the console (docs/transformations.md): its three fields on the endpoint's form, each
 * with the refusal of its expression next to it, what is saved on the endpoint's page, and a "try it" on the company's
 * latest event of a type.
 */

/** The transformation as typed: body, headers one "Name: expression" a line, path; all empty for none. */
export interface TransformationForm {
  body: string;
  headers: string;
  path: string;
}

export const NO_TRANSFORMATION_FORM: TransformationForm = { body: '', headers: '', path: '' };

/** A saved transformation as the form shows it. */
export function transformationFormOf(transformation: EndpointTransformation): TransformationForm {
  if (!transformation) return NO_TRANSFORMATION_FORM;
  const headers = Object.entries(transformation.headers ?? {}).map(([name, expression]) => `${name}: ${expression}`);
  return { body: transformation.body, headers: headers.join('\n'), path: transformation.path ?? '' };
}

function expressionArea(o: { name: string; label: string; value: string; hint: string; error: string | undefined; rows: number }): SafeHtml {
  const id = `field-${o.name}`;
  return html`<div class="field${o.error ? ' field-error' : ''}">
    <label for="${id}">${o.label}</label>
    <p class="hint" id="${id}-hint">${o.hint}</p>
    ${o.error ? html`<p class="error" id="${id}-error">${o.error}</p>` : ''}
    <textarea id="${id}" name="${o.name}" rows="${o.rows}" spellcheck="false" maxlength="20000" aria-describedby="${id}-hint${o.error ? ` ${id}-error` : ''}">${o.value}</textarea>
  </div>`;
}

/** The refusal of the field `prefix` names, or of one under it (transformation.headers.X-Name). */
const errorUnder = (errors: Record<string, string>, prefix: string) => Object.entries(errors).find(([key]) => key === prefix || key.startsWith(`${prefix}.`))?.[1];

/** The form's transformation fields; a feed takes the body only. */
export function transformationFieldset(form: TransformationForm, errors: Record<string, string>, webhook: boolean): SafeHtml {
  // A refusal of one expression is shown next to its field; one of the whole (its shape) above them.
  const general = Object.keys(errors).some((key) => key.startsWith('transformation.')) ? undefined : errors['transformation'];
  return html`<fieldset>
    <legend>Transformation (optional)</legend>
    <p class="hint">Sends the body${webhook ? ', headers and path' : ''} your system takes instead of the event's envelope, with JSONata expressions over the event as it would be sent (e.g. <code>data.project.project_code</code>, <code>event_type</code>). Leave the body empty for none.</p>
    ${general ? html`<p class="error">${general}</p>` : ''}
    ${expressionArea({
      name: 'transformation_body',
      label: 'Body',
      value: form.body,
      hint: 'Its result is the JSON body sent, e.g. {"job": data.project.project_code, "state": $uppercase(data.status)}.',
      error: errorUnder(errors, 'transformation.body'),
      rows: 6,
    })}
    ${webhook
      ? html`${expressionArea({
          name: 'transformation_headers',
          label: 'Headers (optional)',
          value: form.headers,
          hint: 'One a line, Name: expression, whose result (a string) is sent as that header, e.g. X-Job: data.project.project_code. Not X-Webhook-*, Content-Type, Host or hop-by-hop headers; the signature and authentication headers win.',
          error: errorUnder(errors, 'transformation.headers'),
          rows: 3,
        })}
        ${field({
          name: 'transformation_path',
          label: 'Path (optional)',
          value: form.path,
          hint: 'Its result replaces the path and query of the URL (the host never changes), e.g. "/projects/" & data.project.project_code.',
          error: errorUnder(errors, 'transformation.path'),
          attributes: html`maxlength="2000" spellcheck="false"`,
        })}`
      : ''}
  </fieldset>`;
}

/** The endpoint's transformation as saved, its expressions as written, or that it has none. */
export function transformationSummary(transformation: EndpointTransformation): SafeHtml {
  if (!transformation) return html`<span class="muted">none: the event's envelope as it is</span>`;
  const lines = [
    `Body: ${transformation.body}`,
    ...Object.entries(transformation.headers ?? {}).map(([name, expression]) => `Header ${name}: ${expression}`),
    ...(transformation.path === undefined ? [] : [`Path: ${transformation.path}`]),
  ];
  return html`<pre class="filter"><code>${lines.join('\n')}</code></pre>`;
}

/** The transformation tried on the company's latest event of a type: what would be sent, or why it could not be tried. */
export type TransformationTestView = { eventType: string; result: WebhookEndpointTransformationTestResult } | { eventType: string; problem: string };

function testOutcome(test: TransformationTestView | null): SafeHtml | string {
  if (!test) return '';
  if ('problem' in test) return html`<p class="error">${test.problem}</p>`;
  const { result } = test;
  if (result.error) {
    const at = result.error.position === null ? '' : ` at position ${result.error.position}`;
    return html`<p class="error">The delivery would fail: <code>${result.error.field}</code>${at}: ${result.error.message}</p>`;
  }
  const headers = Object.entries(result.headers).map(([name, value]) => `${name}: ${value}`);
  return html`<p>The latest <code>${test.eventType}</code> event would be sent${result.url ? html` to <code>${result.url}</code>` : ''}${headers.length ? ' with' : ''}:</p>
    ${headers.length ? html`<pre><code>${headers.join('\n')}</code></pre>` : ''}
    <pre class="filter"><code>${JSON.stringify(result.body, null, 2)}</code></pre>`;
}

/** "Try it": the saved transformation run on the company's latest event of a type the endpoint subscribes to. */
export function transformationTestSection(endpoint: { id: string; eventTypes: string[] }, test: TransformationTestView | null): SafeHtml {
  const names = EVENT_REGISTRY.filter((e) => isSubscribed(endpoint.eventTypes, e.key)).map((e) => e.shapeA ?? e.shapeB!);
  return html`<h2>Try the transformation</h2>
    <p>What this endpoint would be sent for your company's most recent event of a type.</p>
    <form method="get" action="/console/endpoints/${endpoint.id}#transformation-test" class="filters" aria-label="Try the transformation">
      <div class="actions">
        <div class="field"><label for="transformation-test-type">Event type</label><select id="transformation-test-type" name="transformation_test">${names.map(
          (name) => html`<option value="${name}"${test?.eventType === name ? html` selected` : ''}>${name}</option>`,
        )}</select></div>
        <button type="submit" class="button secondary">Try it</button>
      </div>
    </form>
    <section id="transformation-test" tabindex="-1" aria-live="polite" aria-label="Transformation test result">${testOutcome(test)}</section>`;
}
