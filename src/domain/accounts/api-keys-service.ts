import type { EntityManager } from '@mikro-orm/postgresql';
import { createHash, randomBytes } from 'node:crypto';
import type { SecretBox } from '../../crypto/secret-box';
import type { Principal } from './actor';
import { ApiKey } from './api-key.entity';
import { Company } from './company.entity';
import { unknownScopes } from './scopes';
import { isUuid } from '../../schemas/formats';
import { addBuiltInWorkTypes } from '../time/work-types';

/** Keys look like `cik_<12 id chars>_<43 secret chars>`; the part before the second underscore is the prefix. */
export const KEY_PATTERN = /^(cik_[A-Za-z0-9]{12})_[A-Za-z0-9_-]{43}$/;

const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

function randomAlphanumeric(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  // 248 is the largest multiple of 62 below 256: rejecting bytes above it keeps every character equally likely.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += alphabet[byte % 62];
    }
  }
  return out;
}

export interface IssuedApiKey {
  apiKey: ApiKey;
  /** The key value; shown once, never stored. */
  key: string;
  /** Secret for signing inbound webhook requests; shown once, stored sealed. */
  signingSecret: string;
}

/** A new company (tenant), with the built-in work types every company has. */
export async function createCompany(em: EntityManager, name: string): Promise<Company> {
  const company = em.create(Company, { name: name.trim() });
  addBuiltInWorkTypes(em, company);
  await em.flush();
  return company;
}

export async function issueApiKey(
  em: EntityManager,
  secretBox: SecretBox,
  input: { companyId: string; name: string; scopes: string[] },
): Promise<IssuedApiKey> {
  const unknown = unknownScopes(input.scopes);
  if (unknown.length > 0) throw new Error(`Unknown scopes: ${unknown.join(', ')}`);
  const company = await em.findOne(Company, { id: input.companyId });
  if (!company) throw new Error(`No company with id ${input.companyId}`);
  const prefix = `cik_${randomAlphanumeric(12)}`;
  const key = `${prefix}_${randomBytes(32).toString('base64url')}`;
  const signingSecret = `whsec_${randomBytes(32).toString('base64url')}`;
  const apiKey = em.create(ApiKey, {
    company,
    name: input.name,
    prefix,
    keyHash: hashKey(key),
    scopes: [...new Set(input.scopes)],
    signingSecretSealed: secretBox.seal(signingSecret),
  });
  await em.flush();
  return { apiKey, key, signingSecret };
}

export async function listApiKeys(em: EntityManager, companyId: string): Promise<ApiKey[]> {
  return em.find(ApiKey, { company: companyId }, { orderBy: { createdAt: 'asc' } });
}

/** One of the company's keys by id; null when it has none with that id (or the id is not a UUID). */
export async function getApiKey(em: EntityManager, companyId: string, id: string): Promise<ApiKey | null> {
  return isUuid(id) ? em.findOne(ApiKey, { id, company: companyId }) : null;
}

/**
 * Revokes a key; it is refused from the next request on. Returns null when there is no such key (in
 * `companyId`, when given: the console names only its own company's keys; the operator's CLI any).
 */
export async function revokeApiKey(em: EntityManager, idOrPrefix: string, companyId?: string): Promise<ApiKey | null> {
  const which = isUuid(idOrPrefix) ? { id: idOrPrefix } : { prefix: idOrPrefix };
  const apiKey = await em.findOne(ApiKey, companyId ? { ...which, company: companyId } : which);
  if (!apiKey) return null;
  apiKey.revokedAt ??= new Date();
  await em.flush();
  return apiKey;
}

/**
 * The active key with this prefix: the principal it stands for, the hash the presented key must match, and
 * whether its use in the last minute is recorded already.
 */
export async function findApiKey(em: EntityManager, prefix: string): Promise<{ principal: Principal; keyHash: string; recentlyUsed: boolean } | null> {
  const [row] = await em.execute<
    { id: string; company_id: string; name: string; key_hash: string; scopes: string[]; signing_secret_sealed: string; recently_used: boolean }[]
  >(
    `select id, company_id, name, key_hash, scopes, signing_secret_sealed,
            coalesce(last_used_at > now() - interval '1 minute', false) as recently_used
       from api_keys where prefix = ? and revoked_at is null`,
    [prefix],
  );
  if (!row) return null;
  return {
    keyHash: row.key_hash,
    recentlyUsed: row.recently_used,
    principal: {
      apiKeyId: row.id,
      companyId: row.company_id,
      apiKeyName: row.name,
      scopes: row.scopes,
      signingSecretSealed: row.signing_secret_sealed,
    },
  };
}

/** Records that a request authenticated with the key now, to the minute: at most one write a minute per key. */
export async function markApiKeyUsed(em: EntityManager, apiKeyId: string): Promise<void> {
  await em.execute(
    `update api_keys set last_used_at = now()
      where id = ? and revoked_at is null and (last_used_at is null or last_used_at <= now() - interval '1 minute')`,
    [apiKeyId],
  );
}
