import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../src/paths';

/*
 * The recipes are true: in a copy of the repository, a throwaway workflow is added by docs/architecture.md's table
 * ("A workflow") and a throwaway REST collection by the README's ("Adding a resource"), file by file. The files
 * written are the files the tables name, and in the copy `npm run generate`'s types, `tsc` and the registries'
 * tests pass.
 */

const run = promisify(execFile);
const COPIED = ['package.json', 'tsconfig.json', 'src', 'workflows', 'activities', 'schemas', 'scripts', 'test/helpers', 'test/types', 'test/unit', 'test/fuzz', 'test/integration/resources', 'test/workflows'];

/** The backticked paths of the first column of the table under `heading` in a Markdown file. */
function recipeFiles(file: string, heading: string): string[] {
  const text = readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
  const table = text.slice(text.indexOf(heading)).split(/\n\n/).find((block) => block.startsWith('| File'))!;
  return table
    .split('\n')
    .slice(2)
    .flatMap((row) => [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

/** A copy of the repository to add to, and the files each addition writes in it. */
class Copy {
  readonly root = mkdtempSync(path.join(tmpdir(), 'recipes-'));
  readonly written = new Set<string>();

  constructor() {
    for (const part of COPIED) cpSync(path.join(PROJECT_ROOT, part), path.join(this.root, part), { recursive: true });
    symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(this.root, 'node_modules'));
  }

  write(file: string, text: string) {
    mkdirSync(path.dirname(path.join(this.root, file)), { recursive: true });
    writeFileSync(path.join(this.root, file), text);
    this.written.add(file);
  }

  /** Puts `line` after the line that `after` matches (the last one that does). */
  insert(file: string, after: RegExp, line: string) {
    const lines = readFileSync(path.join(this.root, file), 'utf8').split('\n');
    const at = lines.length - 1 - [...lines].reverse().findIndex((l) => after.test(l));
    if (at === lines.length) throw new Error(`${file}: no line matches ${after}`);
    lines.splice(at + 1, 0, line);
    this.write(file, lines.join('\n'));
  }

  /** Runs node in the copy; a failure says what the command printed (tsc its errors, jest its report). */
  async node(...args: string[]) {
    try {
      return await run(process.execPath, args, { cwd: this.root, maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`node ${args.join(' ')} failed in the copy:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
    }
  }
}

function addWorkflow(copy: Copy) {
  copy.write(
    'workflows/throwaway-check.contract.ts',
    `import { signal, workflowDef } from '../src/domain/workflow-contract';

export interface ThrowawayCheckInput {
  companyId: string;
}

export interface ThrowawayCheckResult {
  checked: boolean;
}

export const THROWAWAY_CHECK = workflowDef<ThrowawayCheckInput, ThrowawayCheckResult>()({
  name: 'throwawayCheck',
  taskQueue: 'operations',
  signals: { proceed: signal<[boolean]>() },
});
`,
  );
  copy.write(
    'workflows/throwaway-check.ts',
    `import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ThrowawayCheckActivities } from '../activities/throwaway-check';
import { temporalSignal } from './messages';
import { THROWAWAY_CHECK, type ThrowawayCheckInput, type ThrowawayCheckResult } from './throwaway-check.contract';

const steps = proxyActivities<ThrowawayCheckActivities>({ startToCloseTimeout: '30 seconds' });

export async function throwawayCheck(input: ThrowawayCheckInput): Promise<ThrowawayCheckResult> {
  let proceed: boolean | undefined;
  setHandler(temporalSignal(THROWAWAY_CHECK.signals.proceed), (answer) => void (proceed = answer));
  await condition(() => proceed !== undefined);
  return { checked: await steps.checkThrowaway(input, proceed!) };
}
`,
  );
  copy.write(
    'activities/throwaway-check.ts',
    `import type { ThrowawayCheckInput } from '../workflows/throwaway-check.contract';
import type { ActivityDeps } from './deps';

export function createThrowawayCheckActivities(_deps: ActivityDeps) {
  return {
    async checkThrowaway(_input: ThrowawayCheckInput, proceed: boolean): Promise<boolean> {
      return proceed;
    },
  };
}

export type ThrowawayCheckActivities = ReturnType<typeof createThrowawayCheckActivities>;
`,
  );
  copy.insert('workflows/contracts.ts', /^import /, "import { THROWAWAY_CHECK } from './throwaway-check.contract';");
  copy.insert('workflows/contracts.ts', /^ {2}WEBHOOK_DELIVERY,$/, '  THROWAWAY_CHECK,');
  copy.insert('workflows/operations.ts', /^export \{/, "export { throwawayCheck } from './throwaway-check';");
  copy.insert('activities/index.ts', /^import .* from '\.\/\w/, "import { createThrowawayCheckActivities } from './throwaway-check';");
  copy.insert('activities/index.ts', /^ {2}webhookDelivery: /, '  throwawayCheck: createThrowawayCheckActivities,');
  copy.write(
    'test/workflows/throwaway-check.test.ts',
    `import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createTimeSkippingEnv } from '../helpers/time-skipping';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

describe('throwawayCheck in skipped time', () => {
  it('has an environment', () => expect(env).toBeDefined());
});
`,
  );
  copy.write(
    'src/domain/work/throwaway-checks.ts',
    `import { THROWAWAY_CHECK } from '../../../workflows/throwaway-check.contract';
import type { WorkflowGateway } from '../workflow-gateway';

/** Starts the company's check, tells it to proceed, and waits up to a second for it. */
export async function runThrowawayCheck(workflows: WorkflowGateway, companyId: string): Promise<boolean | null> {
  const outcome = await workflows.signalAndAwait(
    {
      workflow: THROWAWAY_CHECK,
      workflowId: \`throwaway-check/\${companyId}\`,
      input: { companyId },
      whenOpen: 'join',
      afterClosed: 'start',
      labels: { companyId, eventType: 'throwaway.checked', recordKey: companyId },
      summary: 'A throwaway check',
    },
    THROWAWAY_CHECK.signals.proceed,
    [true],
    1000,
  );
  return outcome.finished ? outcome.result.checked : null;
}
`,
  );
}

function addRestCollection(copy: Copy) {
  copy.write(
    'schemas/rest/throwaway-notes.json',
    JSON.stringify(
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'rest/throwaway-notes.json',
        title: 'Throwaway notes',
        description: 'Notes of a company, added by the recipe test.',
        $defs: {
          fields: { type: 'object', properties: { title: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' }, body: { type: ['string', 'null'], maxLength: 2000 } } },
          create: { title: 'ThrowawayNoteCreate', type: 'object', allOf: [{ $ref: '#/$defs/fields' }], required: ['title'], unevaluatedProperties: false },
          update: { title: 'ThrowawayNoteUpdate', type: 'object', allOf: [{ $ref: '#/$defs/fields' }], minProperties: 1, unevaluatedProperties: false },
          record: {
            title: 'ThrowawayNote',
            type: 'object',
            additionalProperties: false,
            required: ['id', 'title', 'body', 'created_at', 'updated_at'],
            properties: {
              id: { type: 'string', format: 'uuid' },
              title: { type: 'string' },
              body: { type: ['string', 'null'] },
              created_at: { type: 'string', format: 'date-time' },
              updated_at: { type: 'string', format: 'date-time' },
            },
          },
        },
      },
      null,
      2,
    ),
  );
  copy.write(
    'src/domain/work/throwaway-note.entity.ts',
    `import { Entity, Property, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';

@Entity({ tableName: 'throwaway_notes' })
@Unique({ name: 'throwaway_notes_title_unique', expression: 'create unique index "throwaway_notes_title_unique" on "throwaway_notes" ("company_id", lower("title"))' })
export class ThrowawayNote extends CompanyRecord {
  @Property({ type: 'text' })
  title!: string;

  @Property({ type: 'text', nullable: true })
  body: string | null = null;
}
`,
  );
  copy.write(
    'src/domain/work/throwaway-notes.ts',
    `import type { ThrowawayNoteCreate, ThrowawayNote as ThrowawayNoteRecord, ThrowawayNoteUpdate } from '../../generated/schemas';
import { RecordService } from '../records/record-service';
import { ThrowawayNote } from './throwaway-note.entity';

export const throwawayNotes = new RecordService<ThrowawayNote, ThrowawayNoteRecord, ThrowawayNoteCreate, ThrowawayNoteUpdate>({
  entity: ThrowawayNote,
  label: 'Throwaway note',
  wire: { title: 'title', body: 'body' },
  naturalKey: { scope: null, fields: ['title'], describe: (n) => \`A note titled "\${n.title}" already exists\`, uniqueIndex: 'throwaway_notes_title_unique' },
});
`,
  );
  copy.write(
    'src/api/resources/throwaway-notes.ts',
    `import { throwawayNotes } from '../../domain/work/throwaway-notes';
import { byText } from './filters';
import { defineResource } from './resource';

export const throwawayNotesResource = defineResource({
  collection: 'throwaway-notes',
  label: 'Throwaway note',
  plural: 'throwaway notes',
  description: 'Notes of a company, added by the recipe test.',
  schema: 'rest/throwaway-notes.json',
  service: throwawayNotes,
  filters: [byText('title', 'title', 'The note with this title (ignoring case).')],
});
`,
  );
  copy.insert('src/domain/accounts/scopes.ts', /^ {2}'report-runs',$/, "  'throwaway-notes',");
  copy.insert('src/api/resources/index.ts', /^import /, "import { throwawayNotesResource } from './throwaway-notes';");
  copy.insert('src/api/resources/index.ts', /^ {2}'report-runs': /, "  'throwaway-notes': throwawayNotesResource,");
  copy.insert('src/database.ts', /^import \{ \w+ \} from '\.\/domain\//, "import { ThrowawayNote } from './domain/work/throwaway-note.entity';");
  copy.insert('src/database.ts', /^ {2}ConsoleUser,$/, '  ThrowawayNote,');
  copy.write(
    'src/db/migrations/Migration20991231000000ThrowawayNotes.ts',
    `import { Migration } from '@mikro-orm/migrations';

export class Migration20991231000000ThrowawayNotes extends Migration {
  override async up(): Promise<void> {
    this.addSql(\`create table "throwaway_notes" ("id" uuid not null primary key, "company_id" uuid not null references "companies" ("id") on delete cascade, "created_at" timestamptz not null, "updated_at" timestamptz not null, "title" text not null, "body" text null);\`);
    this.addSql(\`create unique index "throwaway_notes_title_unique" on "throwaway_notes" ("company_id", lower("title"));\`);
  }
}
`,
  );
  copy.insert('src/db/migrations/index.ts', /^import /, "import { Migration20991231000000ThrowawayNotes } from './Migration20991231000000ThrowawayNotes';");
  copy.insert('src/db/migrations/index.ts', /^ {2}\{ name: 'Migration/, "  { name: 'Migration20991231000000ThrowawayNotes', class: Migration20991231000000ThrowawayNotes },");
  copy.write(
    'test/integration/resources/throwaway-notes.test.ts',
    `import { startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const throwawayNotesFixture: CrudFixture = {
  collection: 'throwaway-notes',
  table: 'throwaway_notes',
  keyFields: ['title'],
  parents: async () => ({}),
  body: (_, tag) => ({ title: \`Note \${tag}\`, body: 'text' }),
  listRecords: () => [{ title: 'First' }, { title: 'Second' }],
  filters: [{ query: () => 'title=first', expect: [0] }],
  update: { patch: { title: 'Renamed' }, clear: 'body' },
  textField: 'title',
  invalid: [{ what: 'no title', on: 'create', body: () => ({ body: 'text' }), field: 'title' }],
};

describe('REST /throwaway-notes', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(throwawayNotesFixture, () => stack);
});
`,
  );
  copy.insert('test/fuzz/seeds.ts', /^ {4}add\('\/api\/v1\/work-types\/\{id\}', workType\);$/, "    add('/api/v1/throwaway-notes/{id}', await post('throwaway-notes', { title: `Fuzz Note ${unique()}` }));");
  copy.insert('test/fuzz/seeds.ts', /^ {4}'work-types': \(\) => /, "    'throwaway-notes': () => post('throwaway-notes', { title: `Fuzz Gone ${unique()}` }),");
}

describe('the recipes for additions', () => {
  let copy: Copy;
  beforeAll(() => {
    copy = new Copy();
  });
  afterAll(() => rmSync(copy.root, { recursive: true, force: true }));

  it('add a workflow and a REST collection with the files they name, and tsc and the registries tests pass', async () => {
    addWorkflow(copy);
    addRestCollection(copy);
    const workflowRecipe = recipeFiles('docs/architecture.md', '**A workflow**').map((f) =>
      f.replace('<name>', 'throwaway-check').replace('<queue>', 'operations').replace('<area>/<service>', 'work/throwaway-checks'),
    );
    const resourceRecipe = recipeFiles('README.md', '### Adding a resource').map((f) =>
      f
        .replace('supply/vendor-locations', 'work/throwaway-notes')
        .replace('supply/vendor-location', 'work/throwaway-note')
        .replace('vendor-locations', 'throwaway-notes')
        .replace('Migration…ts', 'Migration20991231000000ThrowawayNotes.ts'),
    );
    expect([...copy.written].sort()).toEqual([...workflowRecipe, ...resourceRecipe].sort());

    // npm run generate: the types of the new schema (the SDK's come from the OpenAPI document, out of this test).
    await copy.node('node_modules/tsx/dist/cli.mjs', 'scripts/generate-types.ts');
    writeFileSync(
      path.join(copy.root, 'tsconfig.recipes.json'),
      JSON.stringify({ extends: './tsconfig.json', include: ['src', 'workflows', 'activities', 'test/types', 'test/unit/registries.test.ts', 'test/fuzz/seeds.ts', ...copy.written].filter((f) => f.endsWith('.ts') || !f.includes('.')) }),
    );
    await copy.node('node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.recipes.json');
    writeFileSync(
      path.join(copy.root, 'jest.recipes.json'),
      JSON.stringify({ testEnvironment: 'node', transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: true } }, module: { type: 'commonjs' } }] } }),
    );
    const { stderr } = await copy.node('node_modules/jest/bin/jest.js', '--config', 'jest.recipes.json', '--rootDir', '.', 'test/unit/registries.test.ts', 'test/unit/workflow-tests.test.ts');
    expect(stderr).toMatch(/Tests:\s+\d+ passed, \d+ total/);
  }, 180_000);
});
