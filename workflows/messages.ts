import type { SignalDefinition, UpdateDefinition } from '@temporalio/common';
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SignalDef, UpdateDef } from '../src/domain/workflow-contract';

/*
 * Temporal's definitions of the signals and updates a contract declares, for the workflows that handle them and for
 * src/temporal, which sends them: the same name and types, so Temporal's own typing checks both ends.
 */

export const temporalSignal = <Name extends string, Args extends unknown[]>(signal: SignalDef<Name, Args>): SignalDefinition<Args, Name> =>
  defineSignal<Args, Name>(signal.name);

export const temporalUpdate = <Name extends string, Args extends unknown[], Result>(update: UpdateDef<Name, Args, Result>): UpdateDefinition<Result, Args, Name> =>
  defineUpdate<Result, Args, Name>(update.name);
