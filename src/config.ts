import { TASK_QUEUE_ROLES, type TaskQueueRole, type TaskQueues } from './task-queues';

/**
 * Environment → typed, validated configuration. The production entry points (api, worker) read only this;
 * `npm start` provisions embedded PostgreSQL/Temporal first and passes their addresses in the same way.
 */

export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  databaseUrl: string;
  dbPoolMax: number;
  temporal: {
    address: string;
    namespace: string;
    /** The task queue of each role. */
    taskQueues: TaskQueues;
    /**
     * The one task queue of versions before the split (construction-integration): served with a small budget until
     * nothing runs there, and its schedules moved to the operations queue. Null: off.
     */
    drainTaskQueue: string | null;
    /** Temporal Cloud API key; when set the connection uses TLS. */
    apiKey?: string;
  };
  /** 32-byte key that encrypts signing secrets at rest (AES-256-GCM). */
  encryptionKey: Buffer;
  logLevel: string;
  bodyLimitBytes: number;
  /** How long an inbound request waits for its workflow before answering 202 (it keeps running). */
  inboundWaitMs: number;
  webhooks: {
    /** Lets subscriber endpoints resolve to loopback addresses (tests, local development); never private ranges. */
    allowLoopback: boolean;
    /** Waits between delivery attempts; one attempt more than there are waits. */
    retryDelaysMs: number[];
    /** Deadline of one delivery attempt (connect to last byte read). */
    timeoutMs: number;
    /** Deadline of connecting to the endpoint (DNS, TCP and TLS handshake), within timeoutMs. */
    connectTimeoutMs: number;
    /** How long the workflow of a failed delivery stays open for a re-run (REST and a new run work after that too). */
    rerunWaitMs: number;
    /** An endpoint that has failed every attempt for this long is disabled, with an alert. */
    disableAfterMs: number;
    /** How long deliveries carry the previous secret's signature after a rotation, unless the rotation says. */
    secretOverlapMs: number;
    /** A feed whose oldest unacknowledged event is older than this raises a feed_behind alert (src/delivery/feeds/feed-alerts.ts). */
    feedLagAlertMs: number;
    /** Bounds of one evaluation of an endpoint's transformation (src/delivery/endpoints/endpoint-transformation.ts). */
    transformation: TransformationLimits;
    /** Per-endpoint bounds: attempts in flight and the circuit breaker (src/delivery/endpoints/endpoint-admission.ts). */
    admission: {
      maxInFlight: number;
      failureThreshold: number;
      cooldownMs: number;
      maxCooldownMs: number;
      /** How long a slot outlives the start of its attempt when the attempt never reports back (its worker died). */
      slotLeaseMs: number;
    };
  };
  /** Port of the worker's /metrics (0: any free port). */
  workerMetricsPort: number;
  /** Workflow runs the worker keeps in memory between their tasks, per task queue (an evicted one is replayed on its next task). */
  workerMaxCachedWorkflows: number;
  /** The task queues this worker process serves (each may run as a deployment of its own). */
  workerTaskQueues: TaskQueueRole[];
  /** What each of the worker's task queues may run at once: activities, and workflow tasks. */
  workerSlots: Record<TaskQueueRole | 'drain', WorkerSlots>;
  /** How often the outbox dispatcher looks for events besides being notified of them. */
  outboxPollMs: number;
  /** 0: no limit. */
  outboxCompanyStartsPerSecond: number;
  outboxCompanyMaxQueued: number;
  /** Multiplies every per-key rate limit: 1 in production (see RATE_LIMIT_MULTIPLIER). */
  rateLimitMultiplier: number;
  /** History kept (days), how often the retention schedule prunes the rest, and rows per delete statement. */
  retention: {
    outboxDays: number;
    rateLimitDays: number;
    deliveryDays: number;
    everyMinutes: number;
    batchSize: number;
  };
  /** Trust X-Forwarded-For and X-Forwarded-Proto (the API runs behind a proxy that sets them). */
  trustProxy: boolean;
  console: {
    /** A console session ends after this long without a request… */
    sessionIdleMs: number;
    /** …and this long after sign-in in any case. */
    sessionMaxMs: number;
  };
  /** How long a report waits for approval before its workflow reminds (then again each period). */
  reportApprovalDeadlineMs: number;
  /** How long a submitted purchase order waits for its approvals before its workflow escalates. */
  purchaseOrderApprovalDeadlineMs: number;
  /** The largest file a purchase order attachment may be. */
  attachmentMaxBytes: number;
}

export interface TransformationLimits {
  /** An evaluation running longer is stopped at its next step, and fails. */
  timeoutMs: number;
  /** The largest result (the body written out, each header, the path), in bytes. */
  maxBytes: number;
}

export interface WorkerSlots {
  activities: number;
  workflowTasks: number;
}

interface Setting<T> {
  description: string;
  default?: string;
  /** An empty value is a value (e.g. "off"), not the default. */
  emptyIsValue?: true;
  parse(raw: string): T;
}

class ConfigError extends Error {}

const integer = (min: number, max: number) => (raw: string): number => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
};

const text = (raw: string): string => raw;

const url = (protocols: string[]) => (raw: string): string => {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
};

const hostPort = (raw: string): string => {
  if (!/^[^\s:/]+:\d{1,5}$/.test(raw)) throw new ConfigError(`must be host:port, got "${raw}"`);
  return raw;
};

/** A 32-byte key given as 64 hex characters or as base64. */
export const parseEncryptionKey = (raw: string): Buffer => {
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    throw new ConfigError('must be 32 bytes, as 64 hex characters or base64 (openssl rand -base64 32)');
  }
  return key;
};

const boolean = (raw: string): boolean => {
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`must be true or false, got "${raw}"`);
  return raw === 'true';
};

/** `60,300,900` (seconds, decimals allowed) → milliseconds. */
const secondsList = (raw: string): number[] => {
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.some((v) => !Number.isFinite(v) || v < 0) || values.length > 20) {
    throw new ConfigError(`must be a comma-separated list of up to 20 non-negative numbers of seconds, got "${raw}"`);
  }
  return values.map((v) => Math.round(v * 1000));
};

/** Seconds (decimals allowed, so tests can use fractions) from `min` up to a year → milliseconds. */
const secondsFrom =
  (min: number) =>
  (raw: string): number => {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > 31_536_000) throw new ConfigError(`must be a number of seconds from ${min} to 31536000, got "${raw}"`);
    return Math.round(value * 1000);
  };
const seconds = secondsFrom(0);
/** A period a workflow waits again and again: 0 would make it spin. */
const period = secondsFrom(0.1);

/** Quotes are refused too: the name goes into visibility queries. */
const taskQueueName = (raw: string): string => {
  if (!/^[^\s'"`]{1,255}$/.test(raw)) throw new ConfigError(`must be a task queue name without spaces or quotes, got "${raw}"`);
  return raw;
};

/** `operations,deliveries` → the roles, each once. */
const taskQueueRoles = (raw: string): TaskQueueRole[] => {
  const roles = raw.split(',').map((part) => part.trim());
  const unknown = roles.filter((role) => !(TASK_QUEUE_ROLES as readonly string[]).includes(role));
  if (unknown.length > 0 || new Set(roles).size !== roles.length) {
    throw new ConfigError(`must be a comma-separated list of ${TASK_QUEUE_ROLES.join(' and ')}, each once, got "${raw}"`);
  }
  return roles as TaskQueueRole[];
};

const logLevel = (raw: string): string => {
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(raw)) throw new ConfigError(`must be one of ${levels.join(', ')}`);
  return raw;
};

/** Every setting the service reads. The README's configuration table mirrors this one. */
export const SETTINGS = {
  PORT: { description: 'HTTP port of the API', default: '3000', parse: integer(0, 65535) },
  HOST: { description: 'interface the API listens on', default: '0.0.0.0', parse: text },
  PUBLIC_BASE_URL: {
    description: 'address clients use to reach the API (printed, and used in links)',
    parse: url(['http:', 'https:']),
  },
  DATABASE_URL: {
    description: 'PostgreSQL connection URL, e.g. postgres://user:pass@host:5432/construction',
    parse: url(['postgres:', 'postgresql:']),
  },
  DB_POOL_MAX: { description: 'connections per process', default: '10', parse: integer(1, 200) },
  TEMPORAL_ADDRESS: { description: 'Temporal frontend host:port, e.g. localhost:7233', parse: hostPort },
  TEMPORAL_NAMESPACE: { description: 'Temporal namespace', default: 'default', parse: text },
  TEMPORAL_OPERATIONS_TASK_QUEUE: {
    description: 'task queue of the multi-step workflows (project creation and closing, payroll runs, approvals, scheduled reports, retention) and their activities',
    default: 'operations',
    parse: taskQueueName,
  },
  TEMPORAL_DELIVERIES_TASK_QUEUE: { description: 'task queue of outbound deliveries and bulk recoveries and their activities', default: 'deliveries', parse: taskQueueName },
  TEMPORAL_DRAIN_TASK_QUEUE: {
    description:
      'task queue of versions before the split into operations and deliveries: the worker serves it with the DRAIN_* budget until no run is open there, and moves the schedules that start runs there to the operations queue; empty turns it off',
    default: 'construction-integration',
    emptyIsValue: true,
    parse: (raw: string) => (raw === '' ? '' : taskQueueName(raw)),
  },
  TEMPORAL_API_KEY: { description: 'Temporal Cloud API key (enables TLS)', default: '', parse: text },
  ENCRYPTION_KEY: {
    description: '32-byte key (hex or base64) encrypting signing secrets at rest',
    parse: parseEncryptionKey,
  },
  LOG_LEVEL: { description: 'fatal, error, warn, info, debug, trace or silent', default: 'info', parse: logLevel },
  BODY_LIMIT_BYTES: { description: 'largest accepted request body', default: '1048576', parse: integer(1024, 10485760) },
  INBOUND_WAIT_MS: {
    description: 'how long an inbound multi-step operation is awaited before answering 202',
    default: '20000',
    parse: integer(0, 120000),
  },
  WEBHOOK_RETRY_SCHEDULE: {
    description: 'seconds to wait before each retry of a delivery (webhooks.md 6.3: 1 min, 5 min, 15 min, 1 h, 6 h)',
    default: '60,300,900,3600,21600',
    parse: secondsList,
  },
  WEBHOOK_TIMEOUT_MS: { description: 'deadline of one delivery attempt', default: '30000', parse: integer(100, 120000) },
  WEBHOOK_CONNECT_TIMEOUT_MS: {
    description: 'deadline of connecting to the endpoint (DNS lookup, TCP connect and TLS handshake) within the attempt\'s: an unreachable host frees its worker slot after this long',
    default: '5000',
    parse: integer(100, 120000),
  },
  WEBHOOK_ALLOW_LOOPBACK: {
    description: 'accept subscriber endpoints on loopback addresses (local development and tests only)',
    default: 'false',
    parse: boolean,
  },
  WEBHOOK_RERUN_WAIT: {
    description: 'seconds the workflow of a failed delivery stays open waiting for a re-run (30 days)',
    default: '2592000',
    parse: seconds,
  },
  WEBHOOK_DISABLE_AFTER: {
    description: 'seconds an endpoint may fail every attempt before it is disabled (5 days)',
    default: '432000',
    parse: seconds,
  },
  FEED_LAG_ALERT_MINUTES: {
    description: "minutes a feed's oldest event may wait unacknowledged before a feed_behind alert is raised (resolved once the consumer acknowledges past it)",
    default: '60',
    parse: integer(1, 43_200),
  },
  WEBHOOK_TRANSFORMATION_TIMEOUT_MS: {
    description: "time limit of one evaluation of an endpoint's transformation (docs/transformations.md): one that runs longer fails its delivery",
    default: '200',
    parse: integer(10, 10_000),
  },
  WEBHOOK_TRANSFORMATION_MAX_BYTES: {
    description: "largest body an endpoint's transformation may make, in bytes (JSON, UTF-8): a larger one fails its delivery",
    default: '262144',
    parse: integer(1024, 10_485_760),
  },
  WEBHOOK_SECRET_OVERLAP: {
    description: "seconds deliveries also carry the previous secret's signature after a rotation (24 h)",
    default: '86400',
    parse: seconds,
  },
  WEBHOOK_ENDPOINT_MAX_IN_FLIGHT: {
    description: 'attempts in flight to one endpoint at most, all workers together; more wait without holding a worker slot',
    default: '4',
    parse: integer(1, 1000),
  },
  WEBHOOK_CIRCUIT_FAILURES: {
    description: "deliveries whose attempts to an endpoint failed, a retry included, with no success between (timeouts, connection errors, 5xx; each delivery counts once) that open its circuit breaker",
    default: '5',
    parse: integer(1, 10000),
  },
  WEBHOOK_CIRCUIT_COOLDOWN: {
    description: 'seconds an opened breaker holds attempts before one probe attempt; doubled after each failed probe',
    default: '30',
    parse: seconds,
  },
  WEBHOOK_CIRCUIT_MAX_COOLDOWN: {
    description: 'seconds a breaker holds attempts at most between probes (10 min)',
    default: '600',
    parse: seconds,
  },
  WORKER_METRICS_PORT: { description: 'port of the worker\'s Prometheus /metrics (0: any free port)', default: '9464', parse: integer(0, 65535) },
  WORKER_MAX_CACHED_WORKFLOWS: {
    description:
      "workflow runs a worker keeps in memory between their tasks, per task queue it serves (the SDK would size it from the heap limit: some 2,300 on a 23 GB machine, each open failed or held delivery among them; an evicted run replays its short history on its next task)",
    default: '100',
    parse: integer(2, 100_000),
  },
  WORKER_TASK_QUEUES: {
    description: 'the task queues this worker process serves: operations, deliveries or both (each can run as a deployment of its own)',
    default: 'operations,deliveries',
    parse: taskQueueRoles,
  },
  OPERATIONS_ACTIVITY_SLOTS: { description: 'activities the worker runs at once on the operations task queue', default: '50', parse: integer(1, 10_000) },
  OPERATIONS_WORKFLOW_TASK_SLOTS: {
    description: 'workflow tasks the worker runs at once on the operations task queue (at most WORKER_MAX_CACHED_WORKFLOWS)',
    default: '20',
    parse: integer(2, 10_000),
  },
  DELIVERY_ACTIVITY_SLOTS: {
    description: 'activities (delivery attempts among them) the worker runs at once on the deliveries task queue',
    default: '100',
    parse: integer(1, 10_000),
  },
  DELIVERY_WORKFLOW_TASK_SLOTS: {
    description:
      "workflow tasks the worker runs at once on the deliveries task queue (at most WORKER_MAX_CACHED_WORKFLOWS); a run's first task makes its first attempt (up to a second of waiting for the endpoint's answer), so this many first attempts at once, slow endpoints' among them",
    default: '64',
    parse: integer(2, 10_000),
  },
  DRAIN_ACTIVITY_SLOTS: { description: 'activities the worker runs at once on TEMPORAL_DRAIN_TASK_QUEUE while it drains', default: '10', parse: integer(1, 10_000) },
  DRAIN_WORKFLOW_TASK_SLOTS: { description: 'workflow tasks the worker runs at once on TEMPORAL_DRAIN_TASK_QUEUE while it drains', default: '4', parse: integer(2, 10_000) },
  RATE_LIMIT_MULTIPLIER: {
    description: "multiplies every per-key rate limit (the spec's, e.g. 60 REST requests a minute); for load and fuzz tests, keep 1 in production",
    default: '1',
    parse: integer(1, 1_000_000),
  },
  OUTBOX_POLL_MS: { description: 'how often the dispatcher polls the outbox besides LISTEN/NOTIFY', default: '2000', parse: integer(50, 60000) },
  OUTBOX_COMPANY_STARTS_PER_SECOND: {
    description:
      "delivery workflows a dispatcher starts a second for one company at most while other companies' events are dispatched too (0: no limit); a bigger burst is started over the next seconds, in order, while theirs go in their turn; a company alone is not limited",
    default: '12',
    parse: integer(0, 100_000),
  },
  OUTBOX_COMPANY_MAX_QUEUED: {
    description:
      "deliveries of one company waiting in Temporal's queue at most (started, not yet taken up by a worker; 0: no bound); while it has that many the dispatcher starts no more of them, alone or not, so whoever comes next waits behind that many at most",
    default: '50',
    parse: integer(0, 100_000),
  },
  RETENTION_OUTBOX_DAYS: { description: 'days a dispatched outbox event is kept', default: '30', parse: integer(1, 3650) },
  RETENTION_RATE_LIMIT_DAYS: { description: 'days a rate-limit counter is kept after its window ended', default: '30', parse: integer(1, 3650) },
  RETENTION_DELIVERY_DAYS: {
    description: 'days a finished webhook delivery (with its attempts and alerts), a resolved endpoint alert and a completed bulk recovery are kept; at least 31, as a failed one waits 30 days for a re-run',
    default: '90',
    parse: integer(31, 3650),
  },
  RETENTION_EVERY_MINUTES: { description: 'how often the retention schedule runs', default: '60', parse: integer(1, 10080) },
  RETENTION_BATCH_SIZE: { description: 'rows deleted per statement (each its own short transaction)', default: '1000', parse: integer(1, 100000) },
  TRUST_PROXY: {
    description: 'take the client address and protocol from X-Forwarded-For / X-Forwarded-Proto (behind a proxy that sets them)',
    default: 'false',
    parse: boolean,
  },
  CONSOLE_SESSION_IDLE_MINUTES: { description: 'a console session ends after this many minutes without a request', default: '30', parse: integer(1, 1440) },
  CONSOLE_SESSION_MAX_HOURS: { description: 'a console session ends this many hours after sign-in', default: '12', parse: integer(1, 720) },
  REPORT_APPROVAL_DEADLINE: {
    description: 'seconds a daily or completion report waits for approval before its workflow reminds, and again each such period (48 h)',
    default: '172800',
    parse: period,
  },
  PO_APPROVAL_DEADLINE: {
    description: 'seconds a submitted purchase order waits for its approvals before its workflow escalates them (72 h)',
    default: '259200',
    parse: period,
  },
  ATTACHMENT_MAX_BYTES: { description: 'largest purchase order attachment (10 MiB)', default: '10485760', parse: integer(1024, 104857600) },
} satisfies Record<string, Setting<unknown>>;

type SettingName = keyof typeof SETTINGS;
type Parsed = { [K in SettingName]: ReturnType<(typeof SETTINGS)[K]['parse']> };

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const values = {} as Record<SettingName, unknown>;
  for (const [name, setting] of Object.entries(SETTINGS) as [SettingName, Setting<unknown>][]) {
    const raw = env[name] !== undefined && (env[name] !== '' || setting.emptyIsValue) ? env[name] : setting.default;
    if (raw === undefined) {
      if (name !== 'PUBLIC_BASE_URL') problems.push(`${name} is required: ${setting.description}`);
      continue;
    }
    try {
      values[name] = setting.parse(raw);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(`${name} ${error.message}`);
    }
  }
  const parsed = values as Partial<Parsed>;
  const queues = [parsed.TEMPORAL_OPERATIONS_TASK_QUEUE, parsed.TEMPORAL_DELIVERIES_TASK_QUEUE];
  if (queues[0] !== undefined && queues[0] === queues[1]) {
    problems.push('TEMPORAL_OPERATIONS_TASK_QUEUE and TEMPORAL_DELIVERIES_TASK_QUEUE must differ: the two queues never share capacity');
  }
  if (parsed.TEMPORAL_DRAIN_TASK_QUEUE && queues.includes(parsed.TEMPORAL_DRAIN_TASK_QUEUE)) {
    problems.push('TEMPORAL_DRAIN_TASK_QUEUE must differ from the operations and deliveries task queues (empty turns it off)');
  }
  if (problems.length > 0) {
    throw new Error(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  const v = values as Parsed;
  return {
    port: v.PORT,
    host: v.HOST,
    publicBaseUrl: v.PUBLIC_BASE_URL ?? `http://localhost:${v.PORT}`,
    databaseUrl: v.DATABASE_URL,
    dbPoolMax: v.DB_POOL_MAX,
    temporal: {
      address: v.TEMPORAL_ADDRESS,
      namespace: v.TEMPORAL_NAMESPACE,
      taskQueues: { operations: v.TEMPORAL_OPERATIONS_TASK_QUEUE, deliveries: v.TEMPORAL_DELIVERIES_TASK_QUEUE },
      drainTaskQueue: v.TEMPORAL_DRAIN_TASK_QUEUE || null,
      apiKey: v.TEMPORAL_API_KEY || undefined,
    },
    encryptionKey: v.ENCRYPTION_KEY,
    logLevel: v.LOG_LEVEL,
    bodyLimitBytes: v.BODY_LIMIT_BYTES,
    inboundWaitMs: v.INBOUND_WAIT_MS,
    webhooks: {
      allowLoopback: v.WEBHOOK_ALLOW_LOOPBACK,
      retryDelaysMs: v.WEBHOOK_RETRY_SCHEDULE,
      timeoutMs: v.WEBHOOK_TIMEOUT_MS,
      connectTimeoutMs: v.WEBHOOK_CONNECT_TIMEOUT_MS,
      rerunWaitMs: v.WEBHOOK_RERUN_WAIT,
      disableAfterMs: v.WEBHOOK_DISABLE_AFTER,
      secretOverlapMs: v.WEBHOOK_SECRET_OVERLAP,
      feedLagAlertMs: v.FEED_LAG_ALERT_MINUTES * 60_000,
      transformation: { timeoutMs: v.WEBHOOK_TRANSFORMATION_TIMEOUT_MS, maxBytes: v.WEBHOOK_TRANSFORMATION_MAX_BYTES },
      admission: {
        maxInFlight: v.WEBHOOK_ENDPOINT_MAX_IN_FLIGHT,
        failureThreshold: v.WEBHOOK_CIRCUIT_FAILURES,
        cooldownMs: v.WEBHOOK_CIRCUIT_COOLDOWN,
        maxCooldownMs: Math.max(v.WEBHOOK_CIRCUIT_COOLDOWN, v.WEBHOOK_CIRCUIT_MAX_COOLDOWN),
        // An attempt lasts WEBHOOK_TIMEOUT_MS at most; a minute more covers its bookkeeping and a slow database.
        slotLeaseMs: v.WEBHOOK_TIMEOUT_MS + 60_000,
      },
    },
    workerMetricsPort: v.WORKER_METRICS_PORT,
    workerMaxCachedWorkflows: v.WORKER_MAX_CACHED_WORKFLOWS,
    workerTaskQueues: v.WORKER_TASK_QUEUES,
    workerSlots: {
      operations: { activities: v.OPERATIONS_ACTIVITY_SLOTS, workflowTasks: v.OPERATIONS_WORKFLOW_TASK_SLOTS },
      deliveries: { activities: v.DELIVERY_ACTIVITY_SLOTS, workflowTasks: v.DELIVERY_WORKFLOW_TASK_SLOTS },
      drain: { activities: v.DRAIN_ACTIVITY_SLOTS, workflowTasks: v.DRAIN_WORKFLOW_TASK_SLOTS },
    },
    outboxPollMs: v.OUTBOX_POLL_MS,
    outboxCompanyStartsPerSecond: v.OUTBOX_COMPANY_STARTS_PER_SECOND,
    outboxCompanyMaxQueued: v.OUTBOX_COMPANY_MAX_QUEUED,
    rateLimitMultiplier: v.RATE_LIMIT_MULTIPLIER,
    retention: {
      outboxDays: v.RETENTION_OUTBOX_DAYS,
      rateLimitDays: v.RETENTION_RATE_LIMIT_DAYS,
      deliveryDays: v.RETENTION_DELIVERY_DAYS,
      everyMinutes: v.RETENTION_EVERY_MINUTES,
      batchSize: v.RETENTION_BATCH_SIZE,
    },
    trustProxy: v.TRUST_PROXY,
    console: { sessionIdleMs: v.CONSOLE_SESSION_IDLE_MINUTES * 60_000, sessionMaxMs: v.CONSOLE_SESSION_MAX_HOURS * 3_600_000 },
    reportApprovalDeadlineMs: v.REPORT_APPROVAL_DEADLINE,
    purchaseOrderApprovalDeadlineMs: v.PO_APPROVAL_DEADLINE,
    attachmentMaxBytes: v.ATTACHMENT_MAX_BYTES,
  };
}
