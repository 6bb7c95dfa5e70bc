import type { EntityManager } from '@mikro-orm/postgresql';
import { createHash, randomBytes } from 'node:crypto';
import type { ConsoleRole } from './console-user.entity';

export interface SessionLimits {
  idleMs: number;
  maxMs: number;
}

/** A signed-in user as a request sees them. */
export interface SessionUser {
  id: string;
  companyId: string;
  companyName: string;
  email: string;
  name: string;
  role: ConsoleRole;
}

export interface Session {
  tokenHash: string;
  csrfToken: string;
  /** A message left by the previous request (after a redirect), shown once. */
  flash: string | null;
  user: SessionUser;
}

/** The cookie holds the token; the table holds only its hash, so reading the table gives no one a session. */
export const hashSessionToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A new session for the user (a new token at every sign-in: a token planted before sign-in is worthless). */
export async function createSession(em: EntityManager, userId: string, limits: SessionLimits): Promise<{ token: string }> {
  const token = randomBytes(32).toString('base64url');
  await em.execute(
    `insert into console_sessions (token_hash, user_id, csrf_token, created_at, last_seen_at, expires_at)
     values (?, ?, ?, now(), now(), now() + make_interval(secs => ?))`,
    [hashSessionToken(token), userId, randomBytes(32).toString('base64url'), limits.maxMs / 1000],
  );
  // Expired sessions are of no use to anyone: sign-ins sweep them away.
  await em.execute(`delete from console_sessions where expires_at < now() or last_seen_at < now() - make_interval(secs => ?)`, [limits.idleMs / 1000]);
  return { token };
}

/**
 * The live session of a token: neither past its absolute expiry nor idle too long. Each request counts as
 * activity; last_seen_at is written at most once a minute.
 */
export async function findSession(em: EntityManager, token: string, limits: SessionLimits): Promise<Session | null> {
  const tokenHash = hashSessionToken(token);
  const [row] = await em.execute<
    {
      csrf_token: string;
      flash: string | null;
      seen_recently: boolean;
      user_id: string;
      company_id: string;
      company_name: string;
      email: string;
      name: string;
      role: ConsoleRole;
    }[]
  >(
    `select s.csrf_token, s.flash, s.last_seen_at > now() - interval '1 minute' as seen_recently,
            u.id as user_id, u.company_id, c.name as company_name, u.email, u.name, u.role
       from console_sessions s
       join console_users u on u.id = s.user_id
       join companies c on c.id = u.company_id
      where s.token_hash = ? and s.expires_at > now() and s.last_seen_at > now() - make_interval(secs => ?)`,
    [tokenHash, limits.idleMs / 1000],
  );
  if (!row) return null;
  if (!row.seen_recently || row.flash !== null) {
    await em.execute('update console_sessions set last_seen_at = now(), flash = null where token_hash = ?', [tokenHash]);
  }
  return {
    tokenHash,
    csrfToken: row.csrf_token,
    flash: row.flash,
    user: { id: row.user_id, companyId: row.company_id, companyName: row.company_name, email: row.email, name: row.name, role: row.role },
  };
}

/** Leaves a message for the next page the session sees. */
export async function setFlash(em: EntityManager, tokenHash: string, message: string): Promise<void> {
  await em.execute('update console_sessions set flash = ? where token_hash = ?', [message, tokenHash]);
}

export async function endSession(em: EntityManager, tokenHash: string): Promise<void> {
  await em.execute('delete from console_sessions where token_hash = ?', [tokenHash]);
}

/** Ends every session of a user, but the one given (the user's own, after changing their password). */
export async function endUserSessions(em: EntityManager, userId: string, exceptTokenHash = ''): Promise<void> {
  await em.execute('delete from console_sessions where user_id = ? and token_hash <> ?', [userId, exceptTokenHash]);
}
