import { ApiError } from '../../src/errors';
import { checkTransformation, CompiledTransformation, TransformationError, urlWithPath } from '../../src/delivery/endpoints/endpoint-transformation';

/** An endpoint's transformation (src/delivery/endpoints/endpoint-transformation.ts) without a database. */
describe("an endpoint's transformation", () => {
  const ENDPOINT = 'https://user:pw@hooks.example.com:8443/in?token=abc';
  const limits = { timeoutMs: 200, maxBytes: 1024 };
  const failure = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return error;
    }
    throw new Error('did not throw');
  };

  describe('a path never leaves the endpoint’s origin', () => {
    it.each([
      ['/projects/P-1', 'https://user:pw@hooks.example.com:8443/projects/P-1'],
      ['/projects/P-1?x=1&y=2', 'https://user:pw@hooks.example.com:8443/projects/P-1?x=1&y=2'],
      ['/../@host', 'https://user:pw@hooks.example.com:8443/@host'],
      ['/a/../../b', 'https://user:pw@hooks.example.com:8443/b'],
      ['/x#fragment', 'https://user:pw@hooks.example.com:8443/x'],
      ['/@evil.example/x', 'https://user:pw@hooks.example.com:8443/@evil.example/x'],
    ])('%s keeps the scheme, user, host and port', (path, url) => {
      expect(urlWithPath(ENDPOINT, path)).toBe(url);
    });

    it.each(['//evil.example/x', 'http://other/x', 'https://evil.example/', '/\\evil.example/x', '\\\\evil.example/x', '/\t/evil.example', '/ /x', 'x/y', '', `/${'a'.repeat(2000)}`])(
      '%j is refused',
      (path) => {
        expect(failure(() => urlWithPath(ENDPOINT, path))).toBeInstanceOf(TransformationError);
      },
    );

    it('is the endpoint’s URL as it is without a path', () => {
      expect(urlWithPath(ENDPOINT, null)).toBe(ENDPOINT);
    });
  });

  describe('checked when saved', () => {
    it.each([
      [{ body: '{ "a": data.x, }' }, 'webhook', 'transformation.body'],
      [{ body: 'data', headers: { 'X-Webhook-ID': '"x"' } }, 'webhook', 'transformation.headers.X-Webhook-ID'],
      [{ body: 'data', headers: { Host: '"x"' } }, 'webhook', 'transformation.headers.Host'],
      [{ body: 'data', headers: { 'X-A': '"a"', 'x-a': '"b"' } }, 'webhook', 'transformation.headers.x-a'],
      [{ body: 'data', path: '"//evil.example/x"' }, 'webhook', 'transformation.path'],
      [{ body: 'data', path: '"https://evil.example" & "/x"' }, 'webhook', 'transformation.path'],
      [{ body: 'data', headers: { 'X-A': '"a"' } }, 'feed', 'transformation.headers'],
      [{ body: 'data', path: '"/a"' }, 'feed', 'transformation.path'],
    ] as const)('%j (%s) is a 400 naming %s', (transformation, delivery, field) => {
      const error = failure(() => checkTransformation(transformation, delivery)) as ApiError;
      expect(error).toBeInstanceOf(ApiError);
      expect(error.details).toMatchObject({ field });
    });

    it('takes a path whose leading text is relative, or depends on the event', () => {
      expect(() => checkTransformation({ body: 'data', path: '"/projects/" & data.project_code' }, 'webhook')).not.toThrow();
      expect(() => checkTransformation({ body: 'data', path: 'data.path' }, 'webhook')).not.toThrow();
    });
  });

  describe('evaluated within its limits', () => {
    const event = { event_type: 'project.created', data: { project_code: 'P-1', name: 'Tower' } };

    it('makes the body, headers and path', async () => {
      const compiled = new CompiledTransformation({ body: '{"code": data.project_code}', headers: { 'X-Name': 'data.name' }, path: '"/projects/" & data.project_code' }, limits);
      expect(await compiled.run(event, ENDPOINT)).toEqual({ payload: '{"code":"P-1"}', headers: { 'X-Name': 'Tower' }, path: '/projects/P-1' });
    });

    it.each([
      ['no value', { body: 'data.missing' }, 'returned no value'],
      ['too much', { body: '$pad("", 2000, "x")' }, 'WEBHOOK_TRANSFORMATION_MAX_BYTES'],
      ['a function', { body: 'function($x) { $x }' }, 'not JSON'],
      ['a heavy expression', { body: '$sum([1..3000000].($ * 2))' }, 'timed out after 200 ms'],
      ['a header that is not a string', { body: 'data', headers: { 'X-N': '42' } }, 'printable ASCII'],
      ['a header with a line break', { body: 'data', headers: { 'X-N': '"a\\nb"' } }, 'printable ASCII'],
    ])('fails on %s', async (_, transformation, reason) => {
      const compiled = new CompiledTransformation(transformation, limits);
      await expect(compiled.run(event, ENDPOINT)).rejects.toThrow(reason);
    });

    it('names the expression and the position of an evaluation error', async () => {
      const compiled = new CompiledTransformation({ body: 'data', headers: { 'X-N': 'data.name + 1' } }, limits);
      await expect(compiled.run(event, ENDPOINT)).rejects.toMatchObject({ field: 'transformation.headers.X-N', position: expect.any(Number) });
    });
  });
});
