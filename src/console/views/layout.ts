import { html, type SafeHtml } from '../html';
import type { Session } from '../users/sessions';
import { csrfField } from './components';

export type NavKey = 'api-keys' | 'endpoints' | 'deliveries' | 'alerts' | 'users' | 'account';

const NAV: { key: NavKey; label: string; href: string; adminOnly?: boolean }[] = [
  { key: 'api-keys', label: 'API keys', href: '/console/api-keys' },
  { key: 'endpoints', label: 'Webhook endpoints', href: '/console/endpoints' },
  { key: 'deliveries', label: 'Delivery log', href: '/console/deliveries' },
  { key: 'alerts', label: 'Alerts', href: '/console/alerts' },
  { key: 'users', label: 'Users', href: '/console/users', adminOnly: true },
  { key: 'account', label: 'Your account', href: '/console/account' },
];

export interface PageContent {
  title: string;
  body: SafeHtml;
  nav?: NavKey;
  session?: Session | null;
}

/** The whole document: skip link, header with the company and navigation, the one-time message, the page. */
export function layout({ title, body, nav, session }: PageContent): string {
  const user = session?.user;
  const header = user
    ? html`<header class="site-header">
        <div class="brand"><a href="/console">Account settings</a> <span class="company">${user.companyName}</span></div>
        <nav aria-label="Console">
          <ul>${NAV.filter((item) => !item.adminOnly || user.role === 'admin').map(
            (item) => html`<li><a href="${item.href}"${item.key === nav ? html` aria-current="page"` : ''}>${item.label}</a></li>`,
          )}</ul>
        </nav>
        <form method="post" action="/console/logout" class="sign-out">
          ${csrfField(session.csrfToken)}
          <span class="who">${user.email} (${user.role})</span>
          <button type="submit" class="button secondary">Sign out</button>
        </form>
      </header>`
    : html`<header class="site-header"><div class="brand">Account settings</div></header>`;
  const flash = session?.flash ? html`<div class="flash" role="status">${session.flash}</div>` : '';
  return html`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title} · Account settings</title>
  <link rel="stylesheet" href="/console/assets/console.css">
  <script src="/console/assets/console.js" defer></script>
</head>
<body>
  <a class="skip-link" href="#main">Skip to content</a>
  ${header}
  <main id="main" tabindex="-1">
    ${flash}
    <h1>${title}</h1>
    ${body}
  </main>
</body>
</html>
`.value;
}
