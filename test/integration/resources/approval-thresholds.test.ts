import { startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const approvalThresholdsFixture: CrudFixture = {
  collection: 'approval-thresholds',
  table: 'approval_thresholds',
  keyFields: ['role_name'],
  parents: async () => ({}),
  body: (_, tag) => ({ role_name: `Role ${tag}`, max_amount: 2500.5 }),
  listRecords: () => [
    { role_name: 'Project Manager', max_amount: 10000 },
    { role_name: 'Director', max_amount: 50000 },
    { role_name: 'Vice President', max_amount: null },
  ],
  filters: [
    { query: () => 'role_name=director', expect: [1] },
    { query: () => 'role_name=Project%25', expect: [] },
  ],
  update: { patch: { role_name: 'Senior Director', max_amount: 75000 }, clear: 'max_amount' },
  textField: 'role_name',
  invalid: [
    { what: 'no max_amount (null says: no limit)', on: 'create', body: () => ({ role_name: 'Buyer' }), field: 'max_amount' },
    { what: 'no role_name', on: 'create', body: () => ({ max_amount: 10 }), field: 'role_name' },
    { what: 'a negative max_amount', on: 'update', body: () => ({ max_amount: -1 }), field: 'max_amount' },
    { what: 'a max_amount over a billion', on: 'create', body: () => ({ role_name: 'Owner', max_amount: 1e10 }), field: 'max_amount' },
    { what: 'max_amount as text', on: 'update', body: () => ({ max_amount: '100' }), field: 'max_amount' },
    { what: 'a blank role_name', on: 'update', body: () => ({ role_name: '   ' }), field: 'role_name' },
  ],
};

describe('REST /approval-thresholds', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(approvalThresholdsFixture, () => stack);
});
