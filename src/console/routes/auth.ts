import type Router from '@koa/router';
import type { AppDeps } from '../../api/context';
import type { ConsoleContext, ConsoleState } from '../context';
import { clearCookie, LOGIN_COOKIE, loginToken, newNonce, renderError, SESSION_COOKIE, sameToken, sendPage, setCookie, text } from '../http';
import { checkAgainstDecoy, checkPassword, hashPassword, PASSWORD_MAX_LENGTH } from '../users/passwords';
import { countLoginAttempt, forgiveLoginAttempt } from '../users/login-throttle';
import { createSession, endSession } from '../users/sessions';
import { findUserByEmail, normaliseEmail } from '../users/users-service';
import { loginPage } from '../views/auth';

const HOME = '/console/api-keys';

/** Where to go after signing in: a console page, never another site. */
function safeNext(next: string): string {
  return /^\/console(?:[/?][^\\\s]*)?$/.test(next) ? next : HOME;
}

/** The sign-in form's CSRF nonce: the cookie's when it has one, else a new one set now (for two hours). */
function loginNonce(ctx: ConsoleContext, deps: AppDeps): string {
  const existing = ctx.cookies.get(LOGIN_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{32}$/.test(existing)) return existing;
  const nonce = newNonce();
  setCookie(ctx, deps.config, LOGIN_COOKIE, nonce, 2 * 3600);
  return nonce;
}

const FAILED = 'The email or password is not correct.';

/** Sign-in, sign-out and the console's front door. */
export function mountAuthPages(router: Router<ConsoleState>, deps: AppDeps): void {
  const { config } = deps;
  const limits = { idleMs: config.console.sessionIdleMs, maxMs: config.console.sessionMaxMs };

  const showLogin = (ctx: ConsoleContext, status: number, view: { email?: string; next?: string; error?: string | null; notice?: string | null }) => {
    sendPage(ctx, loginPage({ ...view, csrfToken: loginToken(config, loginNonce(ctx, deps)) }), status);
  };

  router.get('/', (ctx) => {
    ctx.redirect(ctx.state.session ? HOME : '/console/login');
  });

  router.get('/login', (ctx) => {
    if (ctx.state.session) return ctx.redirect(HOME);
    const next = typeof ctx.query.next === 'string' ? safeNext(ctx.query.next) : undefined;
    showLogin(ctx, 200, { next: next === HOME ? undefined : next, notice: ctx.query.signed_out === '1' ? 'You have signed out.' : null });
  });

  router.post('/login', async (ctx) => {
    const nonce = ctx.cookies.get(LOGIN_COOKIE) ?? '';
    if (!nonce || !sameToken(text(ctx.state.form, '_csrf'), loginToken(config, nonce))) {
      return renderError(ctx, 403, 'This sign-in form has expired or did not come from this site. Open the sign-in page again and retry.');
    }
    const { em } = ctx.state;
    const email = normaliseEmail(text(ctx.state.form, 'email'));
    const password = text(ctx.state.form, 'password');
    const next = safeNext(text(ctx.state.form, 'next'));
    const view = { email, next: next === HOME ? undefined : next };
    if (!email || !password || email.length > 254 || password.length > PASSWORD_MAX_LENGTH) {
      return showLogin(ctx, 400, { ...view, error: 'Enter your email and your password.' });
    }
    const who = { email, ip: ctx.ip };
    const retryAfter = await countLoginAttempt(em, who);
    if (retryAfter > 0) {
      ctx.set('Retry-After', String(retryAfter));
      const minutes = Math.ceil(retryAfter / 60);
      return showLogin(ctx, 429, { ...view, error: `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` });
    }
    const user = await findUserByEmail(em, email);
    const check = user ? await checkPassword(user.passwordHash, password) : (await checkAgainstDecoy(password), { matches: false, rehash: false });
    if (!user || !check.matches) {
      ctx.state.log.info({ console: 'sign-in refused' }, 'console sign-in refused');
      return showLogin(ctx, 401, { ...view, error: FAILED });
    }
    await forgiveLoginAttempt(em, who);
    if (check.rehash) user.passwordHash = await hashPassword(password);
    user.lastSignInAt = new Date();
    await em.flush();
    if (ctx.state.session) await endSession(em, ctx.state.session.tokenHash);
    const { token } = await createSession(em, user.id, limits);
    setCookie(ctx, config, SESSION_COOKIE, token);
    clearCookie(ctx, config, LOGIN_COOKIE);
    ctx.state.log.info({ console: 'signed in', userId: user.id }, 'console sign-in');
    ctx.status = 303;
    ctx.redirect(next);
  });

  router.post('/logout', async (ctx) => {
    const { session } = ctx.state;
    if (session) {
      if (!sameToken(text(ctx.state.form, '_csrf'), session.csrfToken)) {
        return renderError(ctx, 403, 'This form did not carry a valid security token. Reload the page and try again.');
      }
      await endSession(ctx.state.em, session.tokenHash);
    }
    clearCookie(ctx, config, SESSION_COOKIE);
    ctx.status = 303;
    ctx.redirect('/console/login?signed_out=1');
  });
}
