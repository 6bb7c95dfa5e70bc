import { spawnSync } from 'node:child_process';
import { globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

/**
 * Every route a reader is told about, in the README, docs/ or a schema's description, is one the service serves:
 * delivery.failed's description once named a `/rerun` that never existed.
 */
describe('routes named in the documentation', () => {
  // In a process of its own: the document's module loads openapi-typescript, an ES module Jest's sandbox does not load.
  const run = spawnSync(
    process.execPath,
    [path.join(PROJECT_ROOT, 'node_modules/tsx/dist/cli.mjs'), '-e', "import('./scripts/generate-sdk-types.ts').then((m) => console.log(JSON.stringify(m.openApiDocument().paths)))"],
    { cwd: PROJECT_ROOT, encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`could not build the OpenAPI document: ${run.stderr}`);
  const paths = JSON.parse(run.stdout) as Record<string, Record<string, unknown>>;
  // A path's parameters, however written ({id}, ${id}, <id>, :id), compare as one marker.
  const shape = (route: string) =>
    route
      .replace(/^\/api\/v1(?=\/)/, '')
      .split('/')
      .map((segment) => (/^(\{[^}]*\}|\$\{[^}]*\}|<[^>]*>|:\w+)$/.test(segment) ? '{}' : segment))
      .join('/');
  const served = new Map<string, Set<string>>();
  for (const [route, methods] of Object.entries(paths)) {
    served.set(shape(route), new Set(Object.keys(methods).map((method) => method.toUpperCase())));
  }

  const sources = [
    'README.md',
    ...globSync('docs/**/*.md', { cwd: PROJECT_ROOT }),
    ...globSync('schemas/**/*.json', { cwd: PROJECT_ROOT }),
    ...globSync('src/**/README.md', { cwd: PROJECT_ROOT }),
  ];
  const named: { source: string; method: string; route: string }[] = [];
  for (const source of sources) {
    const text = readFileSync(path.join(PROJECT_ROOT, source), 'utf8');
    for (const match of text.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/[\w{}$<>:/.|,-]*)/g)) {
      const route = match[2].replace(/[.,:]+$/, '');
      // `POST /{daily|completion}-reports/{id}/approve` names two routes.
      const alternatives = /^\/\{([\w|,-]+)\}(.*)$/.exec(route);
      if (alternatives && /[|,]/.test(alternatives[1])) {
        for (const name of alternatives[1].split(/[|,]/)) named.push({ source, method: match[1], route: `/${name}${alternatives[2]}` });
      } else {
        named.push({ source, method: match[1], route });
      }
    }
  }

  it('finds the routes it checks', () => {
    expect(named.length).toBeGreaterThan(50);
    expect(named).toContainEqual({ source: 'schemas/events/a/delivery.failed.json', method: 'POST', route: '/webhook-deliveries/{id}/retry' });
  });

  it('names only routes the OpenAPI document serves, with their methods', () => {
    const unknown = named
      // A resource collection's pattern (`GET /{collection}/{id}`) and a path cut where a template goes on (`/api/v1/x/`).
      .filter(({ route }) => !route.startsWith('/{collection}') && !route.endsWith('/'))
      .filter(({ method, route }) => !served.get(shape(route))?.has(method))
      .map(({ source, method, route }) => `${source}: ${method} ${route}`);
    expect(unknown).toEqual([]);
  });
});
