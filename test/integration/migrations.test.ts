import { connectOrm } from '../../src/database';
import { createTestDatabase } from '../helpers/stack';

describe('migrations', () => {
  it('produce exactly the schema the entities describe', async () => {
    const orm = await connectOrm(await createTestDatabase(), 1);
    try {
      const diff = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false, dropTables: false });
      expect(diff.trim()).toBe('');
      const pending = await orm.getMigrator().getPendingMigrations();
      expect(pending).toEqual([]);
    } finally {
      await orm.close();
    }
  });
});
