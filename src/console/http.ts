import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { parseTimestamp } from '../schemas/formats';
import type { ConsoleContext, FormBody } from './context';
import { html } from './html';
import type { Session } from './users/sessions';
import { setFlash } from './users/sessions';
import { layout } from './views/layout';

export const SESSION_COOKIE = 'console_session';
export const LOGIN_COOKIE = 'console_login';

/**
 * Pages load only this server's own stylesheet and script; nothing inline, no frames, forms post only here.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function consoleHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
}

/** Cookies get Secure when the request came over HTTPS or the service's public address is HTTPS. */
export const isHttps = (ctx: Context, config: Config) => ctx.secure || config.publicBaseUrl.startsWith('https:');

/** HttpOnly, SameSite=Lax, scoped to /console; a session cookie (no Max-Age) unless `maxAgeSeconds`. */
export function setCookie(ctx: Context, config: Config, name: string, value: string, maxAgeSeconds?: number): void {
  const parts = [`${name}=${value}`, 'Path=/console', 'HttpOnly', 'SameSite=Lax'];
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
  if (isHttps(ctx, config)) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

export const clearCookie = (ctx: Context, config: Config, name: string) => setCookie(ctx, config, name, '', 0);

export const sameToken = (a: string, b: string) => a.length === b.length && a.length > 0 && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The sign-in form has no session to hold its CSRF token: a random nonce goes in a cookie and the form
 * carries its HMAC under a key derived from ENCRYPTION_KEY, so a cookie planted from elsewhere has no
 * matching token.
 */
export const loginToken = (config: Config, nonce: string) => createHmac('sha256', config.encryptionKey).update(`console-login:${nonce}`).digest('base64url');

export const newNonce = () => randomBytes(24).toString('base64url');

/** A form field's value: the first when it was sent several times, '' when missing. */
export function text(form: FormBody, name: string): string {
  const value = form[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** Every value of a repeated field (checkboxes). */
export function list(form: FormBody, name: string): string[] {
  const value = form[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** Answers with a whole page (a view's document). */
export function sendPage(ctx: Context, document: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = document;
}

/** After a form action: a message for the next page, then 303 See Other (a reload does not post again). */
export async function redirectWithFlash(ctx: ConsoleContext, session: Session, location: string, message: string): Promise<void> {
  await setFlash(ctx.state.em, session.tokenHash, message);
  ctx.status = 303;
  ctx.redirect(location);
}

const ERROR_TITLES: Record<number, string> = {
  400: 'That request cannot be used',
  403: 'Not allowed',
  404: 'Page not found',
  409: 'That cannot be done now',
  429: 'Too many requests',
};

/** An error page in the console's layout, with a way back. */
export function renderError(ctx: ConsoleContext, status: number, message: string): void {
  const document = layout({
    title: ERROR_TITLES[status] ?? 'Something went wrong',
    session: ctx.state.session,
    body: html`<p class="error-message">${message}</p><p><a href="/console">Back to the console</a></p>`,
  });
  sendPage(ctx, document, status);
}

/** A domain refusal a form shows next to its fields (400, 409); anything else is thrown on. */
export function formRefusal(error: unknown): ApiError {
  if (error instanceof ApiError && (error.status === 400 || error.status === 409)) return error;
  throw error;
}

/** A datetime-local value (`2026-11-20T14:30`, seconds optional) read as UTC; null when it is not one. */
export function parseUtcLocal(value: string): Date | null {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2})?$/.exec(value);
  return match ? parseTimestamp(`${match[1]}${match[2] ?? ':00'}Z`) : null;
}

/** The datetime-local value of an instant, in UTC. */
export const utcLocal = (date: Date) => date.toISOString().slice(0, 16);

/** A refusal's field, without the index of a list item (`event_types[0]` → `event_types`). */
export const fieldOf = (error: ApiError) => (error.details.field ?? '').replace(/[[.].*$/, '');
