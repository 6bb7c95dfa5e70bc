import { html, SafeHtml } from '../../src/console/html';

describe('console html template', () => {
  it('escapes every interpolated value, but markup made by html itself', () => {
    const name = `<script>alert("x")</script> & 'quotes'`;
    const row = html`<td title="${name}">${name}</td>`;
    expect(row.value).toBe('<td title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;</td>');
    expect(html`<tr>${row}</tr>`.value).toBe(`<tr>${row.value}</tr>`);
  });

  it('joins lists and renders null, undefined and booleans as nothing', () => {
    expect(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.value).toBe('<ul><li>a&lt;</li><li>b</li></ul>');
    expect(html`${null}${undefined}${false}${true}${0}`.value).toBe('0');
    expect(html`${new SafeHtml('<b>kept</b>')}`.value).toBe('<b>kept</b>');
  });
});
