import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { INBOUND_OPERATIONS } from '../../src/api/routes/inbound/operations';
import { temporalScheduleId } from '../../src/domain/reporting/report-schedules';
import { PROJECT_ROOT } from '../../src/paths';
import { optedOut } from '../helpers/opt-outs';
import { schemathesisBinary } from './schemathesis';
import { createTenant, request, startStack, testConfig, type TestStack } from '../helpers/stack';
import { seedRecords } from './seeds';

/**
 * Schema-driven fuzzing: schemathesis generates requests for every operation of /api/v1/openapi.json (every
 * REST route and the inbound endpoint, each event_type signed as a sender signs it) and checks that no
 * response is a 5xx, that every status, content type, header and body is the one the document describes
 * (errors included), and that invalid input is refused. It must also reach every operation's logic: every
 * operation answers 2xx at least once (records seeded for each path), and schemathesis warns of nothing (no
 * operation mostly refused for rate limits, missing records or data the document allows but the server
 * refuses). Its result is one line of its own; schemathesis's report closes like a test runner's, which CI
 * would count. Seeded (a fixed seed unless FUZZ_SEED says another, or random): FUZZ_SEED reproduces a run; FUZZ_OUTPUT=<file> keeps schemathesis's whole report and how
 * each operation was answered (and every response in <file>.responses.ndjson).
 *
 * Two depths (README, "Fuzzing"):
 * - In `npm test`, bounded by time, not by a count of cases: schemathesis gets a wall-clock budget (FUZZ_BUDGET_SECONDS)
 *   and shares it out itself, each phase (examples, coverage, fuzzing) and each operation a slice of what is left, so
 *   that a slow machine tests every operation with fewer cases instead of running out of time half-way through the
 *   operations; a fifth of it then goes to the inbound endpoint alone, each event_type an operation of its own
 *   (fuzzPasses). Each run's overhead is kept out of its generation's time, so the runs end within the budget. The run
 *   must still generate MIN_CASES_PER_SECOND for every second it used.
 * - `npm run fuzz` (FUZZ_DEEP=1): the deep run, FUZZ_EXAMPLES (10) cases per operation and phase with no time limit,
 *   at least DEEP_MIN_CASES in all.
 */

const DEEP = process.env.FUZZ_DEEP === '1';
/**
 * Cases per operation and phase at most. A bounded run's are many, so that each operation's share of the budget, not
 * the count, ends its cases: a run that reached its count before the budget would go round the operations again in
 * small scenarios, and seeded records that a case uses up (an order to approve) would run out in them.
 */
const EXAMPLES_PER_OPERATION = Number(process.env.FUZZ_EXAMPLES ?? (DEEP ? 10 : 1000));
/**
 * The budget of a run in `npm test`: about a fifth of the whole suite's time on one of its two jest workers. A slow
 * day gets fewer cases in it, never a longer run.
 */
const BUDGET_SECONDS = Number(process.env.FUZZ_BUDGET_SECONDS ?? 240);
/**
 * Cases a second a bounded run must generate at least: a run on a fast machine makes about 15, one on a machine 1.5×
 * slower about 10; fewer than this means the fuzzer spent its time on something else than testing.
 */
const MIN_CASES_PER_SECOND = 4;
/** The budget's share of the run over the inbound endpoint alone (fuzzPasses). */
const INBOUND_SHARE = 0.2;
/** The deep run's count, as the suite's run was before it was bounded by time. */
const DEEP_MIN_CASES = 10_000;
/**
 * What one schemathesis run takes beyond its --max-time (loading the document and the hooks, its report): about 4 s
 * here, more on a slow day. Reserved out of the budget, so that the runs together end within it.
 */
const RUN_OVERHEAD_SECONDS = 10;
/** Past its budget, schemathesis is interrupted (it then reports what it ran); killed if it has not ended this long after. */
const OVERRUN_GRACE_MS = 60_000;
/** The seed of a run that reached every operation with no warning. */
const DEFAULT_SEED = 1598710078;
/** FUZZ_PATHS=<regex>: only the operations of matching paths, to look into a few (the run's minimum of cases is then not required). */
const ONLY = process.env.FUZZ_PATHS ? new RegExp(process.env.FUZZ_PATHS) : null;

/**
 * One schemathesis run: its operations (all, or those of matching paths), its share of the budget (none: the deep run's), and
 * whether it runs on the document with each inbound event_type an operation of its own (inboundDocument).
 */
interface Pass {
  name: string;
  paths: RegExp | null;
  seconds: number | null;
  perEventType: boolean;
}

/**
 * The runs of a test: one over every operation, then one more over the inbound endpoint alone (in a bounded run with
 * INBOUND_SHARE of the budget), each event_type an operation of its own. The endpoint's one operation takes every
 * event_type, each a body of its own, and which of them a run draws is chance: a slow machine's few cases left seven
 * never drawn. As operations of their own, schemathesis shares the pass's time out among them, as among REST routes.
 */
function fuzzPasses(): Pass[] {
  if (ONLY) return [{ name: `paths ${ONLY.source}`, paths: ONLY, seconds: DEEP ? null : BUDGET_SECONDS, perEventType: false }];
  const inbound = DEEP ? null : Math.round(BUDGET_SECONDS * INBOUND_SHARE);
  return [
    { name: 'every operation', paths: null, seconds: inbound === null ? null : BUDGET_SECONDS - inbound, perEventType: false },
    { name: 'each inbound event_type', paths: new RegExp(`^${INBOUND_ALIAS_PREFIX}`), seconds: inbound, perEventType: true },
  ];
}

/** The inbound endpoint's event_types as paths of their own (hooks.py sends each to /webhooks/inbound). */
const INBOUND_ALIAS_PREFIX = '/webhooks/inbound/';

interface Document {
  paths: Record<string, Record<string, unknown>>;
}

/**
 * The served document with POST /webhooks/inbound split into one operation per event_type, at
 * `/webhooks/inbound/<event_type>`, each taking that event_type's body alone (its variant of the endpoint's oneOf).
 */
function inboundDocument(document: Document): Document {
  const inbound = document.paths['/webhooks/inbound']!.post as { operationId: string; requestBody: { content: Record<string, { schema: unknown }> } };
  const paths: Document['paths'] = {};
  for (const { eventType } of INBOUND_OPERATIONS) {
    const body = { ...inbound.requestBody, content: { 'application/json': { schema: { $ref: `#/components/schemas/Inbound.${eventType}` } } } };
    paths[`${INBOUND_ALIAS_PREFIX}${eventType}`] = { post: { ...inbound, operationId: `${inbound.operationId}.${eventType}`, requestBody: body } };
  }
  return { ...document, paths };
}

interface RunResult {
  code: number | null;
  output: string;
  /** It overran `deadlineMs` and was interrupted (SIGINT), or killed when it did not end after that either. */
  overran: boolean;
}

/** Runs the command; past `deadlineMs` it is interrupted, and killed OVERRUN_GRACE_MS later if it has not ended. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, deadlineMs: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // In a folder of its own: schemathesis keeps caches in its working directory.
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let overran = false;
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let killer: NodeJS.Timeout | undefined;
    const interrupter = setTimeout(() => {
      overran = true;
      child.kill('SIGINT');
      killer = setTimeout(() => child.kill('SIGKILL'), OVERRUN_GRACE_MS);
    }, deadlineMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(interrupter);
      clearTimeout(killer);
      resolve({ code, output, overran });
    });
  });
}

interface Response {
  operation: string;
  status: number;
  /** Whether schemathesis meant the case to be valid, and in which of its phases it ran. */
  positive: boolean;
  phase: string | null;
  code: string | null;
  field: string | null;
  reason: string | null;
}

/** SKIP_FUZZ_TESTS=1 skips the file, visibly, where that is allowed (see opt-outs). */
const describeFuzz: jest.Describe = optedOut('SKIP_FUZZ_TESTS') ? describe.skip : describe;

/** A closing line in the form of a test runner's summary (`=== 3 warnings in 108.06s ===`): CI would read it as ours. */
const RUNNER_SUMMARY = /^=+ .* =+$/gm;

describeFuzz('fuzzing the API from its OpenAPI document', () => {
  let stack: TestStack;
  let dir: string;

  beforeAll(async () => {
    // The spec's 60 requests a minute per key would refuse most of the run: its key gets a thousand times that.
    stack = await startStack({ config: await testConfig({ RATE_LIMIT_MULTIPLIER: '1000' }) });
    dir = mkdtempSync(path.join(os.tmpdir(), 'fuzz-'));
  });
  afterAll(async () => {
    // The report schedules the run made would go on firing in the Temporal server the other suites share.
    const schedules = await stack.em().execute<{ id: string }[]>('select id from report_schedules');
    await Promise.all(schedules.map(({ id }) => stack.temporal.schedule.getHandle(temporalScheduleId(id)).delete().catch(() => undefined)));
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches every operation with valid input, and finds no 5xx and no response that differs from the document', async () => {
    const binary = await schemathesisBinary();
    // A fixed seed by default, so that a run repeats the last one (CI's gate does not change under it);
    // FUZZ_SEED=random explores, and its line says the seed that repeats it.
    const seed = process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? DEFAULT_SEED);
    const tenant = await createTenant(stack.orm, ['admin']);
    const separate = await createTenant(stack.orm, ['admin']);
    const idsFile = path.join(dir, 'ids.json');
    writeFileSync(idsFile, JSON.stringify(await seedRecords(stack, tenant, separate)));
    const keyFile = path.join(dir, 'key.json');
    writeFileSync(keyFile, JSON.stringify({ key: tenant.key, secret: tenant.signingSecret, separate_key: separate.key }));
    const document = (await request(stack.baseUrl, 'GET', '/api/v1/openapi.json')).body as Document;
    const inboundDocumentFile = path.join(dir, 'inbound-openapi.json');
    writeFileSync(inboundDocumentFile, JSON.stringify(inboundDocument(document)));
    const configFile = path.join(PROJECT_ROOT, 'test/fuzz/schemathesis.toml');
    // The inbound pass's own settings for its event_types' paths (a filter that matches nothing is itself a warning).
    const inboundConfigFile = path.join(dir, 'inbound-schemathesis.toml');
    writeFileSync(inboundConfigFile, `${readFileSync(configFile, 'utf8')}\n${readFileSync(path.join(PROJECT_ROOT, 'test/fuzz/schemathesis-inbound-types.toml'), 'utf8')}`);
    const coverageFile = path.join(dir, 'coverage.ndjson');
    const responsesFile = path.join(dir, 'responses.ndjson');
    const startedAt = Date.now();

    const env = {
      ...process.env,
      PYTHONPATH: path.join(PROJECT_ROOT, 'test/fuzz'),
      SCHEMATHESIS_HOOKS: 'hooks',
      FUZZ_KEY_FILE: keyFile,
      FUZZ_COVERAGE_FILE: coverageFile,
      FUZZ_RESPONSES_FILE: responsesFile,
      FUZZ_IDS_FILE: idsFile,
      FUZZ_BASE_URL: stack.baseUrl,
    };
    const schemathesis = (pass: Pass, maxTime: number | null) =>
      run(
        binary,
        [
          // What the service answers beyond schemathesis's defaults (413 to a body over its size limit).
          '--config-file',
          pass.perEventType ? inboundConfigFile : configFile,
          'run',
          pass.perEventType ? inboundDocumentFile : `${stack.baseUrl}/api/v1/openapi.json`,
          '--url',
          stack.baseUrl,
          '--seed',
          String(seed),
          '--max-examples',
          String(EXAMPLES_PER_OPERATION),
          // Spread over the phases and operations by schemathesis; what is left after examples and coverage goes to
          // further rounds of fuzzing, each with new cases.
          ...(maxTime === null ? [] : ['--max-time', String(maxTime)]),
          '--phases',
          'examples,coverage,fuzzing',
          '--checks',
          // The other methods of an event_type's own path are not the endpoint's: the first pass tries them on the endpoint.
          `not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection,missing_required_header${pass.perEventType ? '' : ',unsupported_method'}`,
          // One worker: Hypothesis is not thread-safe everywhere (seen: "AST constructor recursion depth mismatch").
          '--workers',
          '1',
          '--request-timeout',
          '30',
          // The service refuses NUL in every text (PostgreSQL cannot store it): a rule of its own, tested elsewhere.
          '--generation-allow-x00',
          'false',
          '--suppress-health-check',
          'all',
          '--no-color',
          ...(pass.paths ? ['--include-path-regex', pass.paths.source] : []),
        ],
        dir,
        env,
        maxTime === null ? 60 * 60_000 : maxTime * 1000 + OVERRUN_GRACE_MS,
      );
    const passes = fuzzPasses();
    const results: RunResult[] = [];
    const maxTimes: number[] = [];
    for (const [i, pass] of passes.entries()) {
      // What is left of the budget, less the later passes' shares and every pass's overhead still to come.
      const later = passes.slice(i + 1).reduce((sum, next) => sum + (next.seconds ?? 0), 0);
      const left = BUDGET_SECONDS - (Date.now() - startedAt) / 1000 - later - RUN_OVERHEAD_SECONDS * (passes.length - i);
      const maxTime = pass.seconds === null ? null : Math.max(1, Math.floor(left));
      if (maxTime !== null) maxTimes.push(maxTime);
      results.push(await schemathesis(pass, maxTime));
    }
    const result: RunResult = {
      code: results.find((r) => r.code !== 0)?.code ?? 0,
      output: results.map((r) => r.output).join('\n'),
      overran: results.some((r) => r.overran),
    };
    const seconds = Math.round((Date.now() - startedAt) / 1000);
    const output = result.output.replace(RUNNER_SUMMARY, '');
    const cases = [...output.matchAll(/(\d+) generated/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    // Each warning with the operations it names, from each pass's WARNINGS section.
    const warningSections = [...result.output.matchAll(/^=+ WARNINGS =+$([\s\S]*?)^=+ SUMMARY =+$/gm)].map((match) => match[1]!);
    const warnings = warningSections
      .join('\n')
      .split('\n')
      .filter((line) => /^\S/.test(line) || /^\s+- /.test(line))
      .map((line) => line.trim());
    const responses = readFileSync(responsesFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Response);
    const operations = documentedOperations(document).filter((op) => !ONLY || ONLY.test(op.split(' ')[1]!));
    const answered2xx = new Set(responses.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.operation));
    // schemathesis reads the document itself from there, and tests every other operation.
    if (/Loaded specification from/.test(result.output)) answered2xx.add('GET /api/v1/openapi.json');
    const serverErrors = responses.filter((r) => r.status >= 500);
    // schemathesis's own report goes to a file when asked for (its closing line is in the form CI reads), with
    // how each operation was answered.
    if (process.env.FUZZ_OUTPUT) {
      const answers = operations.map((op) => `${op}\n${summarise(responses.filter((r) => r.operation === op)).map((a) => `    ${a}`).join('\n')}`);
      writeFileSync(process.env.FUZZ_OUTPUT, `${result.output}\n\nAnswers per operation:\n${answers.join('\n')}\n`);
      writeFileSync(`${process.env.FUZZ_OUTPUT}.responses.ndjson`, readFileSync(responsesFile));
    }
    // The run's minimum of cases: a deep run's fixed count, a bounded run's in proportion to the seconds it used.
    const minCases = ONLY ? 0 : DEEP ? DEEP_MIN_CASES : Math.floor(MIN_CASES_PER_SECOND * seconds);
    console.log(
      `API fuzz${DEEP ? ' (deep)' : ''}: ${answered2xx.size} of ${operations.length} operations answered 2xx, ${cases} cases (at least ${minCases}) in ${seconds} s ` +
        `${DEEP ? `(${EXAMPLES_PER_OPERATION} per operation and phase, no time limit)` : `of a ${BUDGET_SECONDS} s budget (generation ${passes.map((pass, i) => `${maxTimes[i]} s ${pass.name}`).join(', ')}; at most ${EXAMPLES_PER_OPERATION} per operation and phase)`}, ` +
        `${warnings.filter((line) => !/^(-|💡)/u.test(line)).length} warnings, ${serverErrors.length} 5xx, exit code ${result.code}${result.overran ? ' (overran its budget: interrupted)' : ''} (FUZZ_SEED=${seed} repeats it)`,
    );

    // What went wrong, with schemathesis's reproduction commands: its FAILURES and ERRORS sections.
    const problems = [...result.output.matchAll(/=+ (?:FAILURES|ERRORS) =+[\s\S]*?(?==+ (?:WARNINGS|SUMMARY) =+)/g)].map((match) => match[0].replace(RUNNER_SUMMARY, '')).join('\n');
    expect({ seed, exitCode: result.code, problems: result.code === 0 ? 'none' : problems.slice(0, 30_000) || output.slice(-4000) }).toEqual({ seed, exitCode: 0, problems: 'none' });
    expect({ warnings, serverErrors }).toEqual({ warnings: [], serverErrors: [] });
    expect(operations.filter((op) => !answered2xx.has(op)).map((op) => ({ op, answers: summarise(responses.filter((r) => r.operation === op)) }))).toEqual([]);
    expect({ overran: result.overran }).toEqual({ overran: false });
    expect(cases).toBeGreaterThanOrEqual(minCases);
    const signed = new Set(
      readFileSync(coverageFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { event_type?: string }).event_type),
    );
    if (!ONLY) expect(INBOUND_OPERATIONS.map((op) => op.eventType).filter((eventType) => !signed.has(eventType))).toEqual([]);
  }, (DEEP ? 65 * 60 : BUDGET_SECONDS + 600) * 1000);
});

/** `METHOD /path` of every operation the OpenAPI document describes. */
function documentedOperations(document: Document): string[] {
  const methods = new Set(['get', 'put', 'post', 'delete', 'patch']);
  return Object.entries(document.paths).flatMap(([route, item]) => Object.keys(item).filter((m) => methods.has(m)).map((m) => `${m.toUpperCase()} ${route}`));
}

/** How an operation was answered: the count of each phase (+ valid cases, - invalid), status and error, most frequent first. */
function summarise(responses: Response[]): string[] {
  const counts = new Map<string, number>();
  for (const r of responses) {
    const key = [`${r.phase ?? '?'}${r.positive ? '+' : '-'}`, r.status, r.code, r.field, r.reason].filter((part) => part !== null && part !== undefined).join(' ');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([key, count]) => `${count}× ${key}`);
}
