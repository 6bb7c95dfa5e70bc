/*
 * Type tests, checked by `tsc --noEmit` (npm test) and never run: the worker's bundle (workflows/index.ts) has a
 * workflow function for each contract of the one list (workflows/contracts.ts), under its name, taking its input and
 * giving its result, and nothing else. A workflow missing from the bundle, or one the list does not know, does not compile.
 */
import type * as bundle from '../../workflows';
import type { InputOf, ResultOf } from '../../src/domain/workflow-contract';
import type { AnyWorkflow, WorkflowName } from '../../workflows/contracts';

type Bundle = typeof bundle;
type ByContract = { [W in AnyWorkflow as W['name']]: (input: InputOf<W>, ...rest: never[]) => Promise<ResultOf<W>> };

export const everyContractBundled: ByContract = {} as Bundle;
export const nothingBundledWithoutContract: WorkflowName = '' as keyof Bundle;
