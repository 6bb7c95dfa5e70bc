import { exitOnUnsupportedNode } from '../runtime-version';
import type { EntityManager } from '@mikro-orm/postgresql';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { parseEncryptionKey, SETTINGS } from '../config';
import { SecretBox } from '../crypto/secret-box';
import { runningEmbeddedPostgresUrl, startEmbeddedPostgres } from '../db/embedded-postgres';
import { connectOrm, migrate } from '../database';
import { CONSOLE_ROLES, type ConsoleRole } from '../console/users/console-user.entity';
import { createUser, listUsers, resetPassword } from '../console/users/users-service';
import { Company } from '../domain/accounts/company.entity';
import { createCompany, issueApiKey, listApiKeys, revokeApiKey } from '../domain/accounts/api-keys-service';
import { ALL_SCOPES } from '../domain/accounts/scopes';
import type { Actor } from '../domain/accounts/actor';
import { findIdIgnoringCase } from '../domain/natural-keys';
import { addSkill, listSkills } from '../domain/people/skills-service';
import { getRecovery, startRecovery } from '../delivery/deliveries-service';
import { WebhookEndpoint } from '../delivery/endpoints/webhook-endpoint.entity';
import { approvalThresholds } from '../domain/supply/approval-thresholds';
import { workTypes } from '../domain/time/work-types';
import { ApiError } from '../errors';
import type { ApprovalThresholdCreate, ApprovalThreshold as ApprovalThresholdRecord, WorkTypeCreate, WorkType as WorkTypeRecord, WorkTypeUpdate } from '../generated/schemas';
import { isUuid } from '../schemas/formats';
import { SchemaValidator } from '../schemas/schema-validator';
import { LOCAL_DATA_DIR, LOCAL_DATABASE, LOCAL_POSTGRES_PORT, LOCAL_TEMPORAL_PORT, localEncryptionKey } from '../local-environment';
import { connectTemporalClient } from '../temporal/connection';
import { temporalDeliveryWorkflows } from '../temporal/temporal-delivery-workflows';

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
  work-type list --company <id>                          the company's work types (built-ins REG, OT, VAC,
                                                         SICK, HOL and its own)
  work-type add --company <id> --name <name> [--code <code>] [--billable yes|no]
                [--requires-work-order yes|no] [--pay-multiplier <n>] [--active yes|no] [--default]
  work-type set --company <id> <code or name> [--name <name>] [--code <code>] [--billable yes|no]
                [--requires-work-order yes|no|auto] [--pay-multiplier <n>] [--active yes|no] [--default]
                                                         change a work type (auto: billable decides)
  approval-threshold list --company <id>                 how much each role may approve on a purchase order
  approval-threshold set --company <id> --role <name> --max-amount <amount|none>
                                                         add or change a role's threshold (none: no limit)
  approval-threshold remove --company <id> --role <name>
  user create --company <id> --email <email> --name <name> [--role admin|viewer]
                                                         add a console user (the company's first admin:
                                                         role admin, the default); prints a generated
                                                         password once
  user list --company <id>
  user reset-password <email>                            a new generated password, printed once; the
                                                         user's sessions end
  scopes                                                 list the scopes a key can hold
  delivery recover --endpoint <id> --since <ISO time>    re-run every failed or cancelled delivery of the
                   [--timeout <seconds>]                 endpoint since then, showing progress (the worker
                                                         must be running; Temporal: TEMPORAL_ADDRESS, else
                                                         the one of \`npm start\`)

Uses DATABASE_URL (and ENCRYPTION_KEY) when set; otherwise the embedded database of \`npm start\` in .data/,
starting it for the command when it is not running.`;

interface Args {
  positionals: string[];
  company?: string;
  name?: string;
  email?: string;
  role?: string;
  scopes?: string;
  code?: string;
  billable?: string;
  'requires-work-order'?: string;
  'pay-multiplier'?: string;
  active?: string;
  default?: boolean;
  endpoint?: string;
  since?: string;
  timeout?: string;
  'max-amount'?: string;
}

type Command = (em: EntityManager, args: Args) => Promise<void>;

const need = (value: string | undefined, flag: string): string => {
  if (!value) throw new Error(`${flag} is required\n\n${USAGE}`);
  return value;
};

const secretBox = () => new SecretBox(parseEncryptionKey(process.env.ENCRYPTION_KEY || localEncryptionKey()));

/** The company a command names, which must exist. */
async function companyOf(em: EntityManager, id: string | undefined): Promise<string> {
  const companyId = need(id, '--company');
  if (!isUuid(companyId) || !(await em.findOne(Company, companyId))) throw new Error(`No company with id ${companyId}`);
  return companyId;
}

/** Work types and approval thresholds record no events, so no API key is named as the origin of the change. */
const operator = (companyId: string): Actor => ({ companyId, apiKeyId: 'operator' });

/** A refusal of the services, as the CLI prints it: the field and why. */
const asCliError = (error: unknown): never => {
  if (error instanceof ApiError) throw new Error(error.message, { cause: error });
  throw error;
};

const flag = (value: string | undefined, option: string): boolean | undefined => {
  if (value === undefined) return undefined;
  if (value !== 'yes' && value !== 'no') throw new Error(`${option} takes yes or no`);
  return value === 'yes';
};

/** A command's body held to the REST schema's bounds; a violation is the error message, naming the field. */
function checked<T>(schemaId: string, body: Record<string, unknown>): T {
  try {
    return new SchemaValidator().validate(schemaId, body);
  } catch (error) {
    if (error instanceof ApiError) throw new Error(`${error.details.field}: ${error.details.reason}`, { cause: error });
    throw error;
  }
}

/** The REST body of a work-type command's options. */
function workTypeBody(args: Args, schema: 'create' | 'update'): WorkTypeCreate & WorkTypeUpdate {
  const requires = args['requires-work-order'];
  const multiplier = args['pay-multiplier'];
  const body = {
    name: args.name,
    code: args.code,
    billable: flag(args.billable, '--billable'),
    requires_work_order: requires === 'auto' ? null : flag(requires, '--requires-work-order'),
    pay_multiplier: multiplier === undefined ? undefined : Number(multiplier),
    is_active: flag(args.active, '--active'),
    is_default: args.default,
  };
  const given = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
  return checked(`rest/work-types.json#/$defs/${schema}`, given);
}

const thresholdLine = (t: ApprovalThresholdRecord) => `${t.role_name.padEnd(24)}  ${t.max_amount === null ? 'no limit' : `up to ${t.max_amount}`}`;

const workTypeLine = (t: WorkTypeRecord) =>
  [
    (t.code ?? '-').padEnd(8),
    t.name.padEnd(24),
    t.billable ? 'billable' : 'non-billable',
    `work order ${(t.requires_work_order ?? t.billable) ? 'required' : 'optional'}`,
    `x${t.pay_multiplier}`,
    t.is_active ? 'active' : 'inactive',
    t.is_default ? 'default' : '',
  ]
    .join('  ')
    .trimEnd();

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
  'user create': async (em, { company, email, name, role }) => {
    const chosen = role ?? 'admin';
    if (!CONSOLE_ROLES.includes(chosen as ConsoleRole)) throw new Error(`--role takes ${CONSOLE_ROLES.join(' or ')}`);
    const { user, password } = await createUser(em, {
      companyId: await companyOf(em, company),
      email: need(email, '--email'),
      name: need(name, '--name'),
      role: chosen as ConsoleRole,
    }).catch(asCliError);
    console.log(`Console user created (the password is shown only now; sign in at /console and change it there)
  id:        ${user.id}
  email:     ${user.email}
  role:      ${user.role}
  password:  ${password}`);
  },
  'user list': async (em, { company }) => {
    for (const u of await listUsers(em, await companyOf(em, company))) {
      console.log(`${u.id}  ${u.email}  ${u.name}  ${u.role}  last sign-in ${u.lastSignInAt?.toISOString() ?? 'never'}`);
    }
  },
  'user reset-password': async (em, { positionals }) => {
    const { user, password } = await resetPassword(em, need(positionals[0], '<email>')).catch(asCliError);
    console.log(`Password reset for ${user.email} (shown only now; their sessions have ended)\n  password:  ${password}`);
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
  'delivery recover': async (em, { endpoint: endpointId, since, timeout }) => {
    const endpoint = await em.findOne(WebhookEndpoint, { id: need(endpointId, '--endpoint') });
    if (!endpoint) throw new Error(`No webhook endpoint ${endpointId}`);
    const from = need(since, '--since');
    if (!ISO_TIME.test(from) || Number.isNaN(Date.parse(from))) throw new Error(`--since must be an ISO 8601 time such as 2026-11-20T00:00:00Z, got "${from}"`);
    const timeoutMs = Number(timeout ?? 600) * 1000;
    if (!(timeoutMs > 0)) throw new Error(`--timeout must be a number of seconds, got "${timeout}"`);
    const temporal = await connectTemporalClient({
      address: process.env.TEMPORAL_ADDRESS || `localhost:${LOCAL_TEMPORAL_PORT}`,
      namespace: process.env.TEMPORAL_NAMESPACE || SETTINGS.TEMPORAL_NAMESPACE.default,
      apiKey: process.env.TEMPORAL_API_KEY || undefined,
    });
    const taskQueues = {
      operations: process.env.TEMPORAL_OPERATIONS_TASK_QUEUE || SETTINGS.TEMPORAL_OPERATIONS_TASK_QUEUE.default,
      deliveries: process.env.TEMPORAL_DELIVERIES_TASK_QUEUE || SETTINGS.TEMPORAL_DELIVERIES_TASK_QUEUE.default,
    };
    try {
      const recovery = await startRecovery(em, temporalDeliveryWorkflows(temporal, taskQueues), endpoint.company.id, endpoint.id, new Date(from));
      console.log(`Recovery ${recovery.id}: ${recovery.deliveryIds.length} failed or cancelled deliveries to ${endpoint.url} since ${from}`);
      await followRecovery(em, recovery.id, timeoutMs);
    } finally {
      await temporal.connection.close();
    }
  },
  'work-type list': async (em, { company }) => {
    const { items } = await workTypes.list(em, await companyOf(em, company), { limit: 10_000, offset: 0 });
    for (const t of items) console.log(workTypeLine(t));
  },
  'work-type add': async (em, args) => {
    const companyId = await companyOf(em, args.company);
    const created = await workTypes.create(em, operator(companyId), workTypeBody(args, 'create'));
    console.log(`Added ${workTypeLine(created)}`);
  },
  'work-type set': async (em, args) => {
    const companyId = await companyOf(em, args.company);
    const which = need(args.positionals.join(' '), '<code or name>');
    const id = (await findIdIgnoringCase(em, 'work_types', { company_id: companyId }, { code: which })) ?? (await workTypes.findIdByKey(em, companyId, [which]));
    if (!id) throw new Error(`No work type with the code or name "${which}"`);
    const { record } = await workTypes.change(em, operator(companyId), id, workTypeBody(args, 'update'));
    console.log(`Changed ${workTypeLine(record)}`);
  },
  'approval-threshold list': async (em, { company }) => {
    const { items } = await approvalThresholds.list(em, await companyOf(em, company), { limit: 10_000, offset: 0 });
    for (const t of items.sort((a, b) => (a.max_amount ?? Infinity) - (b.max_amount ?? Infinity))) console.log(thresholdLine(t));
  },
  'approval-threshold set': async (em, args) => {
    const companyId = await companyOf(em, args.company);
    const amount = need(args['max-amount'], '--max-amount');
    const body = checked<ApprovalThresholdCreate>('rest/approval-thresholds.json#/$defs/create', {
      role_name: need(args.role, '--role'),
      max_amount: amount === 'none' ? null : Number(amount),
    });
    const id = await approvalThresholds.findIdByKey(em, companyId, [body.role_name]);
    // The role keeps the spelling it was added with.
    const saved = id ? await approvalThresholds.update(em, operator(companyId), id, { max_amount: body.max_amount }) : await approvalThresholds.create(em, operator(companyId), body);
    console.log(`${id ? 'Changed' : 'Added'} ${thresholdLine(saved)}`);
  },
  'approval-threshold remove': async (em, args) => {
    const companyId = await companyOf(em, args.company);
    const role = need(args.role, '--role');
    const id = await approvalThresholds.findIdByKey(em, companyId, [role]);
    if (!id) throw new Error(`No approval threshold for the role "${role}"`);
    await approvalThresholds.remove(em, operator(companyId), id);
    console.log(`Removed the approval threshold of ${role}`);
  },
};

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Prints the recovery's progress until every delivery's re-run has finished: a bar redrawn in place on a terminal,
 * a line per change otherwise (logs, CI). Throws when `timeoutMs` passes first; the recovery carries on regardless.
 */
async function followRecovery(em: EntityManager, recoveryId: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const tty = process.stdout.isTTY;
  let shown = '';
  for (;;) {
    em.clear();
    const { recovery, finished, outcomes } = await getRecovery(em, recoveryId);
    const total = recovery.deliveryIds.length;
    const width = 30;
    const filled = total === 0 ? width : Math.round((finished / total) * width);
    const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${finished}/${total} re-run · requested ${recovery.requested} · delivered ${outcomes.delivered} · failed ${outcomes.failed} · cancelled ${outcomes.cancelled}`;
    if (line !== shown) {
      process.stdout.write(tty ? `\r${line}` : `${line}\n`);
      shown = line;
    }
    if (recovery.status === 'completed' && finished >= total) {
      if (tty) process.stdout.write('\n');
      console.log(`Done: ${outcomes.delivered} delivered, ${outcomes.failed} failed, ${outcomes.cancelled} cancelled of ${total}`);
      return;
    }
    if (Date.now() > deadline) {
      if (tty) process.stdout.write('\n');
      throw new Error(`Still running after ${timeoutMs / 1000} s; the recovery carries on (workflow webhook-recovery/${recoveryId})`);
    }
    await delay(500);
  }
}

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
    options: {
      company: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      scopes: { type: 'string' },
      code: { type: 'string' },
      billable: { type: 'string' },
      'requires-work-order': { type: 'string' },
      'pay-multiplier': { type: 'string' },
      active: { type: 'string' },
      default: { type: 'boolean' },
      endpoint: { type: 'string' },
      since: { type: 'string' },
      timeout: { type: 'string' },
      'max-amount': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
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
