import type { InstrumentationBase } from '@opentelemetry/instrumentation';
import { createRequire } from 'node:module';

// Inside a test file: jest's require, which resolves and loads a module as the test file's code gets it.
const requireHere = createRequire(__filename);

/**
 * Applies the instrumentations' patches to pg as this test file's code uses it. A service
 * process has the SDK patch them as they are required (src/observability/tracing.ts), through Node's require hooks;
 * jest loads modules through a registry of its own, which those hooks never see. The patches are the
 * instrumentations' own, and stopping the tracing takes them off again.
 */
export function instrumentLoadedModules(instrumentations: InstrumentationBase[]): void {
  for (const instrumentation of instrumentations) {
    for (const definition of instrumentation.getModuleDefinitions()) {
      const moduleExports: unknown = requireHere(definition.name);
      definition.moduleExports = moduleExports;
      definition.patch?.(moduleExports);
    }
  }
}
