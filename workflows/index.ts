/**
 * Every workflow the worker runs, by task queue: the bundle of both, which a queue of an older version being drained
 * needs, and which any queue's Workers can load (WORKFLOW_BUNDLE_PATH).
 */
export * from './operations';
export * from './deliveries';
