import type { EntityManager } from '@mikro-orm/postgresql';
import { createHash } from 'node:crypto';

/**
 * Sign-in attempts counted per account and per client address, in PostgreSQL so every API process shares the
 * count. An attempt is counted before the password is checked (an upsert: parallel attempts cannot slip past
 * the limit) and a successful one is taken back out. Past a limit every sign-in of that account, or from that
 * address, is refused until the window that began with its first attempt ends, whether the password is right
 * or not. Accounts are counted by the email typed, existing or not, so a refusal says nothing about which
 * emails exist.
 */
export const LOGIN_LIMITS = {
  account: { failures: 5, windowSeconds: 15 * 60 },
  ip: { failures: 20, windowSeconds: 15 * 60 },
} as const;

type Kind = keyof typeof LOGIN_LIMITS;

export interface LoginSubjects {
  email: string;
  ip: string;
}

/** The emails people typed are not kept in clear. */
const accountSubject = (email: string) => `account:${createHash('sha256').update(email).digest('hex')}`;

const subjectsOf = ({ email, ip }: LoginSubjects): [Kind, string][] => [
  ['account', accountSubject(email)],
  ['ip', `ip:${ip}`],
];

/**
 * Counts a sign-in attempt against the account and the address. Returns 0 when it may go ahead, else the
 * seconds until sign-in is allowed again (the attempt is refused without checking the password).
 */
export async function countLoginAttempt(em: EntityManager, who: LoginSubjects): Promise<number> {
  let wait = 0;
  for (const [kind, subject] of subjectsOf(who)) {
    const { failures, windowSeconds } = LOGIN_LIMITS[kind];
    const [row] = await em.execute<{ failures: number; seconds_left: number }[]>(
      `insert into console_login_failures as f (subject, window_start, failures) values (?, now(), 1)
       on conflict (subject) do update set
         failures = case when f.window_start > now() - make_interval(secs => ?) then f.failures + 1 else 1 end,
         window_start = case when f.window_start > now() - make_interval(secs => ?) then f.window_start else now() end
       returning f.failures, ceil(extract(epoch from f.window_start + make_interval(secs => ?) - now()))::int as seconds_left`,
      [subject, windowSeconds, windowSeconds, windowSeconds],
    );
    if (row!.failures > failures) wait = Math.max(wait, row!.seconds_left, 1);
  }
  const longest = Math.max(...Object.values(LOGIN_LIMITS).map((l) => l.windowSeconds));
  await em.execute('delete from console_login_failures where window_start < now() - make_interval(secs => ?)', [longest]);
  return wait;
}

/** A successful sign-in: the account starts afresh, and the attempt no longer counts against the address. */
export async function forgiveLoginAttempt(em: EntityManager, who: LoginSubjects): Promise<void> {
  const [[, account], [, ip]] = subjectsOf(who);
  await em.execute('delete from console_login_failures where subject = ?', [account]);
  await em.execute('update console_login_failures set failures = greatest(failures - 1, 0) where subject = ?', [ip]);
}
