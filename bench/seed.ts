import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { SecretBox } from '../src/crypto/secret-box';
import type { Orm } from '../src/db/orm';
import { createCompany, type IssuedApiKey, issueApiKey } from '../src/domain/accounts/api-keys-service';
import { customers } from '../src/domain/business/customers';
import { locations } from '../src/domain/business/locations';
import { createProject } from '../src/domain/work/projects';

/** Runs `work` for 0 … count-1 with `lanes` in flight. */
export async function inLanes(count: number, lanes: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

export interface Tenant {
  companyId: string;
  keys: IssuedApiKey[];
  projectIds: string[];
}

/**
 * A company with `keys` admin API keys (rate limits are per key: the load is spread over them so that the
 * limits do not cap it) and `projects` projects under one customer and location.
 */
export async function seedTenant(orm: Orm, encryptionKey: Buffer, name: string, counts: { keys: number; projects: number }): Promise<Tenant> {
  const em = () => orm.em.fork() as EntityManager;
  const secretBox = new SecretBox(encryptionKey);
  const company = await createCompany(em(), name);
  const keys: IssuedApiKey[] = [];
  await inLanes(counts.keys, 8, async (i) => {
    keys.push(await issueApiKey(em(), secretBox, { companyId: company.id, name: `bench ${i}`, scopes: ['admin'] }));
  });
  const actor = { companyId: company.id, apiKeyId: keys[0]!.apiKey.id };
  const { record: customer } = await customers.findOrCreate(em(), actor, { name: `${name} customer` });
  const { record: location } = await locations.findOrCreate(em(), actor, { customer_id: customer.id, name: `${name} site` });
  const projectIds: string[] = [];
  await inLanes(counts.projects, 4, async (i) => {
    const projectId = uuidv7();
    await createProject(em(), actor, { projectId, project: { project_code: `B-${i}`, name: `Bench ${i}`, customer_id: customer.id, location_id: location.id } }, uuidv7());
    projectIds.push(projectId);
  });
  return { companyId: company.id, keys, projectIds };
}

/** The API keys in turn, so that no key's rate limit caps the load. */
export function rotation(tenant: Tenant): () => string {
  let i = 0;
  return () => tenant.keys[i++ % tenant.keys.length]!.key;
}
