import { loadConfig } from '../../src/config';

const valid = {
  DATABASE_URL: 'postgres://u:p@localhost:5432/db',
  TEMPORAL_ADDRESS: 'localhost:7233',
  ENCRYPTION_KEY: '00'.repeat(32),
};

describe('configuration', () => {
  it('applies defaults', () => {
    const config = loadConfig(valid);
    expect(config).toMatchObject({
      port: 3000,
      temporal: { namespace: 'default', taskQueues: { operations: 'operations', deliveries: 'deliveries' }, drainTaskQueue: 'construction-integration' },
      workerTaskQueues: ['operations', 'deliveries'],
      workerSlots: { operations: { activities: 50, workflowTasks: 20 }, deliveries: { activities: 100, workflowTasks: 64 }, drain: { activities: 10, workflowTasks: 4 } },
      webhooks: { timeoutMs: 30000, connectTimeoutMs: 5000 },
      bodyLimitBytes: 1048576,
    });
    expect(config.publicBaseUrl).toBe('http://localhost:3000');
    expect(config.encryptionKey).toHaveLength(32);
  });

  it('lists every missing or invalid setting in one error', () => {
    let message = '';
    try {
      loadConfig({ PORT: 'eighty', ENCRYPTION_KEY: 'short' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^Invalid configuration:/);
    expect(message).toContain('DATABASE_URL is required');
    expect(message).toContain('TEMPORAL_ADDRESS is required');
    expect(message).toContain('PORT must be an integer from 0 to 65535, got "eighty"');
    expect(message).toContain('ENCRYPTION_KEY must be 32 bytes');
  });

  it('rejects malformed URLs and addresses', () => {
    expect(() => loadConfig({ ...valid, DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL must use postgres:/);
    expect(() => loadConfig({ ...valid, TEMPORAL_ADDRESS: 'http://localhost:7233' })).toThrow(/TEMPORAL_ADDRESS must be host:port/);
  });

  it('serves one task queue or both, and never one queue in two roles', () => {
    expect(loadConfig({ ...valid, WORKER_TASK_QUEUES: 'deliveries' }).workerTaskQueues).toEqual(['deliveries']);
    expect(() => loadConfig({ ...valid, WORKER_TASK_QUEUES: 'deliveries,webhooks' })).toThrow(/WORKER_TASK_QUEUES must be a comma-separated list of operations and deliveries/);
    expect(() => loadConfig({ ...valid, WORKER_TASK_QUEUES: 'operations,operations' })).toThrow(/each once/);
    expect(() => loadConfig({ ...valid, TEMPORAL_DELIVERIES_TASK_QUEUE: 'operations' })).toThrow(/must differ: the two queues never share capacity/);
    expect(() => loadConfig({ ...valid, TEMPORAL_OPERATIONS_TASK_QUEUE: 'construction-integration' })).toThrow(/TEMPORAL_DRAIN_TASK_QUEUE must differ/);
  });

  it('turns draining off with an empty TEMPORAL_DRAIN_TASK_QUEUE, where other empty settings take their default', () => {
    const config = loadConfig({ ...valid, TEMPORAL_DRAIN_TASK_QUEUE: '', TEMPORAL_OPERATIONS_TASK_QUEUE: '' });
    expect(config.temporal).toMatchObject({ drainTaskQueue: null, taskQueues: { operations: 'operations' } });
    expect(loadConfig({ ...valid, TEMPORAL_OPERATIONS_TASK_QUEUE: 'construction-integration', TEMPORAL_DRAIN_TASK_QUEUE: '' }).temporal.drainTaskQueue).toBeNull();
  });

  it('accepts the encryption key as base64 too', () => {
    expect(loadConfig({ ...valid, ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') }).encryptionKey).toEqual(Buffer.alloc(32, 7));
  });
});
