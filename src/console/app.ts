import Router from '@koa/router';
import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import compose from 'koa-compose';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AppDeps, AppState } from '../api/context';
import { assertStorableText } from '../api/middleware/storable-text';
import { recordId } from '../api/record-id';
import { ApiError } from '../errors';
import { PROJECT_ROOT } from '../paths';
import type { ConsoleContext, ConsolePage, ConsoleState, FormBody } from './context';
import { consoleHeaders, renderError, SESSION_COOKIE, sameToken, text } from './http';
import { apiKeyPages } from './routes/api-keys';
import { mountAuthPages } from './routes/auth';
import { deliveryPages } from './routes/deliveries';
import { endpointPages } from './routes/endpoints';
import { userPages } from './routes/users';
import { findSession } from './users/sessions';

/** The stylesheet and script, served from this folder (the Docker image copies it next to dist/). */
export const CONSOLE_ASSETS_DIR = path.join(PROJECT_ROOT, 'src', 'console', 'assets');

const ASSETS: Record<string, string> = { 'console.css': 'text/css; charset=utf-8', 'console.js': 'application/javascript; charset=utf-8' };

/** Every console page and action (but sign-in and sign-out). */
export const consolePages = (deps: AppDeps): ConsolePage[] => [...apiKeyPages(deps), ...endpointPages(deps), ...deliveryPages(deps), ...userPages(deps)];

/** Signed-out visitors go to the sign-in page (a page they asked for comes back after it). */
const requireSignIn: Middleware<ConsoleState> = async (ctx, next) => {
  if (ctx.state.session) return next();
  ctx.status = 303;
  ctx.redirect(ctx.method === 'GET' ? `/console/login?next=${encodeURIComponent(ctx.originalUrl)}` : '/console/login');
};

/** Every POST carries the session's CSRF token in `_csrf`. */
const requireCsrf: Middleware<ConsoleState> = async (ctx, next) => {
  if (!sameToken(text(ctx.state.form, '_csrf'), ctx.state.session!.csrfToken)) {
    throw new ApiError('FORBIDDEN', 'This form did not carry a valid security token, so nothing was changed. Reload the page and try again.', {
      field: '_csrf',
      reason: 'missing or invalid',
    });
  }
  await next();
};

/** A page's role, checked like an API key's scope: viewers may read; admin pages are refused to them. */
const requireRole = (page: ConsolePage): Middleware<ConsoleState> => async (ctx, next) => {
  const { role } = ctx.state.session!.user;
  if (page.role === 'admin' && role !== 'admin') {
    throw new ApiError('FORBIDDEN', `Your role (${role}) can view but not change anything: this needs an admin of your company.`, { field: 'role', reason: 'admin only' });
  }
  await next();
};

function mountPage(router: Router<ConsoleState>, page: ConsolePage): void {
  const checks: Middleware<ConsoleState>[] = [requireSignIn];
  if (page.method === 'POST') checks.push(requireCsrf);
  checks.push(requireRole(page), (ctx, next) => {
    if (ctx.params.id !== undefined) ctx.params.id = recordId(ctx.params.id, 'Page');
    return next();
  });
  const handler: Middleware<ConsoleState> = (ctx) => page.handler(ctx as ConsoleContext, ctx.state.session!);
  router.register(page.path, [page.method], [...checks, handler] as never);
}

/** Errors as pages: refusals (4xx) say why, anything else is logged and quoted by request id. */
const errorPages: Middleware<ConsoleState> = async (ctx, next) => {
  try {
    await next();
    if (ctx.body === undefined && (ctx.status === 404 || ctx.status === 405 || ctx.status === 501)) {
      renderError(ctx as ConsoleContext, 404, 'There is no such page in the console.');
    }
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) return renderError(ctx as ConsoleContext, error.status, error.message);
    // The body parser's refusals (a form too large, unreadable) carry their status.
    const { status } = error as { status?: number };
    if (status !== undefined && status >= 400 && status < 500) return renderError(ctx as ConsoleContext, status, 'The request could not be read.');
    ctx.state.log.error({ err: error }, 'console request failed');
    renderError(ctx as ConsoleContext, 500, `Something went wrong on our side (request id ${ctx.state.requestId}). Try again in a moment.`);
  }
};

/**
 * The account settings console at /console: security headers → error pages → assets | session from the
 * cookie → form body (URL-encoded, 64 KiB) → sign-in pages | each page behind sign-in, CSRF (POST) and its role.
 */
export function consoleApp(deps: AppDeps): Middleware<AppState> {
  const assets = Object.fromEntries(Object.keys(ASSETS).map((name) => [name, readFileSync(path.join(CONSOLE_ASSETS_DIR, name))]));
  const limits = { idleMs: deps.config.console.sessionIdleMs, maxMs: deps.config.console.sessionMaxMs };
  const router = new Router<ConsoleState>({ prefix: '/console' });
  mountAuthPages(router, deps);
  for (const page of consolePages(deps)) mountPage(router, page);
  const readForm = bodyParser({ enableTypes: ['form'], formLimit: '64kb' });

  const chain: Middleware<ConsoleState>[] = [
    async (ctx, next) => {
      consoleHeaders(ctx);
      await next();
    },
    errorPages,
    async (ctx, next) => {
      const asset = /^\/console\/assets\/([a-z.]+)$/.exec(ctx.path)?.[1];
      if (asset && ASSETS[asset] && ctx.method === 'GET') {
        ctx.type = ASSETS[asset];
        ctx.body = assets[asset];
        return;
      }
      await next();
    },
    async (ctx, next) => {
      const token = ctx.cookies.get(SESSION_COOKIE);
      ctx.state.session = token && /^[A-Za-z0-9_-]{43}$/.test(token) ? await findSession(ctx.state.em, token, limits) : null;
      await next();
    },
    readForm as Middleware<ConsoleState>,
    async (ctx, next) => {
      ctx.state.form = (ctx.request.body ?? {}) as FormBody;
      assertStorableText(ctx.state.form, '');
      await next();
    },
    router.routes() as Middleware<ConsoleState>,
    router.allowedMethods() as Middleware<ConsoleState>,
  ];
  return compose(chain) as unknown as Middleware<AppState>;
}
