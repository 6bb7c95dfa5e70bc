/** Markup that is already safe: produced by the `html` template, never by concatenating input. */
export class SafeHtml {
  constructor(readonly value: string) {}
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export type Html = SafeHtml | string | number | boolean | null | undefined | readonly Html[];

function render(part: Html): string {
  if (part === null || part === undefined || part === false || part === true) return '';
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/**
 * The one way pages are written: every interpolated value is escaped unless it is SafeHtml (another `html`
 * result), lists are joined, and null, undefined and booleans render as nothing (so `cond && html`…`` works).
 * Attribute values are always quoted in the templates, so escaping quotes keeps them inside.
 */
export function html(strings: TemplateStringsArray, ...values: Html[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}
