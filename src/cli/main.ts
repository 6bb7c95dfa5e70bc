import { exitOnUnsupportedNode } from '../runtime-version';
import type { EntityManager } from '@mikro-orm/postgresql';
import { parseArgs } from 'node:util';
import { parseEncryptionKey } from '../config';
import { SecretBox } from '../crypto/secret-box';
import { runningEmbeddedPostgresUrl, startEmbeddedPostgres } from '../db/embedded-postgres';
import { connectOrm, migrate } from '../db/orm';
import { Company } from '../domain/accounts/company.entity';
import { createCompany, issueApiKey, listApiKeys, revokeApiKey } from '../domain/accounts/api-keys-service';
import { ALL_SCOPES } from '../domain/accounts/scopes';
import { addSkill, listSkills } from '../domain/people/skills-service';
import { ApiError } from '../errors';
import { LOCAL_DATA_DIR, LOCAL_DATABASE, LOCAL_POSTGRES_PORT, localEncryptionKey } from '../local-environment';

exitOnUnsupportedNode();

const USAGE = `Usage: npm run cli -- <command>

  company create <name>                                  create a company (tenant); prints its id
  company list
  key create --company <id> --name <name> --scopes <a,b> issue an API key; prints the key and its
                                                         inbound signing secret once
  key list --company <id>
  key revoke <key id or prefix>
  skill add --company <id> <name> [<name> …]             add entries to the company's skill library
  skill list --company <id>
  scopes                                                 list the scopes a key can hold

Uses DATABASE_URL (and ENCRYPTION_KEY) when set; otherwise the embedded database of \`npm start\` in .data/,
starting it for the command when it is not running.`;

type Command = (em: EntityManager, args: { positionals: string[]; company?: string; name?: string; scopes?: string }) => Promise<void>;

const need = (value: string | undefined, flag: string): string => {
  if (!value) throw new Error(`${flag} is required\n\n${USAGE}`);
  return value;
};

const secretBox = () => new SecretBox(parseEncryptionKey(process.env.ENCRYPTION_KEY || localEncryptionKey()));

const COMMANDS: Record<string, Command> = {
  'company create': async (em, { positionals }) => {
    const company = await createCompany(em, need(positionals.join(' '), '<name>'));
    console.log(`Company created\n  id:   ${company.id}\n  name: ${company.name}`);
  },
  'company list': async (em) => {
    for (const c of await em.find(Company, {}, { orderBy: { createdAt: 'asc' } })) console.log(`${c.id}  ${c.name}`);
  },
  'key create': async (em, { company, name, scopes }) => {
    const issued = await issueApiKey(em, secretBox(), {
      companyId: need(company, '--company'),
      name: need(name, '--name'),
      scopes: need(scopes, '--scopes').split(',').map((s) => s.trim()).filter(Boolean),
    });
    console.log(`API key created (the key and the signing secret are shown only now; store them safely)
  id:              ${issued.apiKey.id}
  name:            ${issued.apiKey.name}
  prefix:          ${issued.apiKey.prefix}
  scopes:          ${issued.apiKey.scopes.join(', ')}
  key:             ${issued.key}
  signing secret:  ${issued.signingSecret}`);
  },
  'key list': async (em, { company }) => {
    for (const k of await listApiKeys(em, need(company, '--company'))) {
      const state = k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active';
      console.log(`${k.id}  ${k.prefix}  ${k.name}  [${k.scopes.join(', ')}]  ${state}`);
    }
  },
  'key revoke': async (em, { positionals }) => {
    const key = await revokeApiKey(em, need(positionals[0], '<key id or prefix>'));
    if (!key) throw new Error(`No API key ${positionals[0]}`);
    console.log(`Revoked ${key.prefix} (${key.name})`);
  },
  'skill add': async (em, { company, positionals }) => {
    const companyId = need(company, '--company');
    for (const name of positionals) {
      try {
        console.log(`Added ${(await addSkill(em, companyId, name)).name}`);
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'CONFLICT')) throw error;
        console.log(`Already there: ${name}`);
      }
    }
  },
  'skill list': async (em, { company }) => {
    const { items } = await listSkills(em, need(company, '--company'), { limit: 10_000, offset: 0 });
    for (const s of items) console.log(`${s.id}  ${s.name}`);
  },
};

async function withDatabase(run: (em: EntityManager) => Promise<void>): Promise<void> {
  let url = process.env.DATABASE_URL || runningEmbeddedPostgresUrl(LOCAL_DATA_DIR, LOCAL_DATABASE);
  const embedded = url ? null : await startEmbeddedPostgres({ dataDir: LOCAL_DATA_DIR, port: LOCAL_POSTGRES_PORT, database: LOCAL_DATABASE });
  url ??= embedded!.url;
  const orm = await connectOrm(url, 2);
  try {
    await migrate(orm);
    await run(orm.em.fork() as EntityManager);
  } finally {
    await orm.close();
    await embedded?.stop();
  }
}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { company: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [group, action, ...rest] = positionals;
  if (values.help || !group) return console.log(USAGE);
  if (group === 'scopes') return console.log(ALL_SCOPES.join('\n'));
  const command = COMMANDS[`${group} ${action}`];
  if (!command) throw new Error(`Unknown command "${positionals.join(' ')}"\n\n${USAGE}`);
  await withDatabase((em) => command(em, { positionals: rest, ...values }));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
