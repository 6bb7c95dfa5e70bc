import { argon2id, hash, needsRehash, verify } from 'argon2';
import { randomBytes } from 'node:crypto';

/**
 * argon2id with OWASP's first recommended setting (19 MiB, 2 passes, 1 lane): about 25 ms here, in libuv's
 * thread pool, so a sign-in never blocks the event loop. Stored hashes carry their parameters: a hash made
 * with weaker ones is replaced at the next sign-in.
 */
const OPTIONS = { type: argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

export const hashPassword = (password: string): Promise<string> => hash(password, OPTIONS);

/** Whether `password` matches `passwordHash`, and whether the hash should be remade with today's parameters. */
export async function checkPassword(passwordHash: string, password: string): Promise<{ matches: boolean; rehash: boolean }> {
  const matches = await verify(passwordHash, password);
  return { matches, rehash: matches && needsRehash(passwordHash, OPTIONS) };
}

let decoy: Promise<string> | undefined;

/** The same work as checking a password, for an email no user has: the answer takes as long either way. */
export async function checkAgainstDecoy(password: string): Promise<void> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  await verify(await decoy, password);
}

/** 20 characters of a URL-safe alphabet (120 random bits), for a first or reset password shown once. */
export const generatePassword = (): string => randomBytes(15).toString('base64url');

/** Why `password` cannot be a password, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}
