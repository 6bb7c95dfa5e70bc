import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/paths';

/**
 * Where the console's screenshots go: with UPDATE_SCREENSHOTS=1 into docs/console/, which the README and docs
 * show; otherwise into a temporary folder, so a test run leaves the work tree as it was.
 */
const SCREENSHOTS_DIR = process.env.UPDATE_SCREENSHOTS ? path.join(PROJECT_ROOT, 'docs', 'console') : mkdtempSync(path.join(os.tmpdir(), 'console-screenshots-'));

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true });
}

/**
 * What every console page must offer a keyboard and screen reader user: a language, one h1, a label for every
 * form control, a name for every button and link. Returns the problems found. (Scripts run in the page are
 * given as text: the test code is compiled without the DOM's types.)
 */
export function accessibilityProblems(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`(() => {
    const problems = [];
    if (!document.documentElement.lang) problems.push('html has no lang');
    if (document.querySelectorAll('h1').length !== 1) problems.push('not exactly one h1');
    for (const control of document.querySelectorAll('input, select, textarea')) {
      if (control.type === 'hidden') continue;
      if (control.labels.length === 0 && !control.getAttribute('aria-label')) problems.push(control.outerHTML + ' has no label');
    }
    for (const element of document.querySelectorAll('button, a[href]')) {
      if (!element.textContent.trim() && !element.getAttribute('aria-label')) problems.push(element.outerHTML + ' has no name');
    }
    return problems;
  })()`);
}

/** The focused element and its outline: the console draws a visible one on everything focusable. */
export function focusOutline(page: Page): Promise<{ tag: string; text: string; outline: string }> {
  return page.evaluate(`(() => {
    const element = document.activeElement;
    const style = getComputedStyle(element);
    return { tag: element.tagName, text: element.textContent.trim(), outline: style.outlineStyle + ' ' + style.outlineWidth };
  })()`);
}

/** The POST forms (their paths) and the links to write pages a page offers. */
export function writeActions(page: Page): Promise<{ posts: string[]; links: string[] }> {
  return page.evaluate(`(() => ({
    posts: [...document.querySelectorAll('form')].filter((f) => f.method === 'post').map((f) => new URL(f.action).pathname),
    links: [...document.querySelectorAll('a[href]')].map((a) => new URL(a.href).pathname).filter((p) => /\\/(new|edit|revoke|delete|rotate-secret|remove)$/.test(p)),
  }))()`);
}

export interface ConsoleResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/**
 * The console over plain HTTP, as a browser without scripts uses it: a cookie jar, redirects not followed, and
 * the CSRF token of the last page read sent with every form (unless told not to).
 */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(
    readonly baseUrl: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async request(method: 'GET' | 'POST', path: string, form?: Record<string, string | string[]>): Promise<ConsoleResponse> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.cookies.size) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: URLSearchParams | undefined;
    if (form) {
      body = new URLSearchParams();
      for (const [name, value] of Object.entries(form)) for (const each of [value].flat()) body.append(name, each);
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
      if (/Max-Age=0/.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (token) this.csrf = token;
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') };
  }

  get(path: string) {
    return this.request('GET', path);
  }

  post(path: string, form: Record<string, string | string[]> = {}, options: { csrf?: boolean } = {}) {
    return this.request('POST', path, options.csrf === false ? form : { _csrf: this.csrf, ...form });
  }

  /** Signs in through the form; returns the sign-in answer (303 on success). */
  async signIn(email: string, password: string): Promise<ConsoleResponse> {
    await this.get('/console/login');
    return this.post('/console/login', { email, password });
  }
}
