import { TestWorkflowEnvironment } from '@temporalio/testing';
import { resolveTemporalExecutable } from '../../src/temporal/cli-binary';
import { DEV_SERVER_SQLITE_ARGS } from '../../src/temporal/dev-server';
import { registerMissingSearchAttributes } from '../../src/temporal/register-search-attributes';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';

describe('search attributes', () => {
  it('are added to a namespace that lacks them (a dev server database from an older version)', async () => {
    const env = await TestWorkflowEnvironment.createLocal({
      server: { executable: resolveTemporalExecutable(), searchAttributes: [SEARCH_ATTRIBUTES[0]!], extraArgs: DEV_SERVER_SQLITE_ARGS },
    });
    try {
      const added = await registerMissingSearchAttributes(env.connection, 'default');
      expect(added).toEqual(SEARCH_ATTRIBUTES.slice(1).map((k) => k.name));
      const { customAttributes } = await env.connection.operatorService.listSearchAttributes({ namespace: 'default' });
      expect(Object.keys(customAttributes ?? {})).toEqual(expect.arrayContaining(SEARCH_ATTRIBUTES.map((k) => k.name)));
      expect(await registerMissingSearchAttributes(env.connection, 'default')).toEqual([]);
    } finally {
      await env.teardown();
    }
  });
});
