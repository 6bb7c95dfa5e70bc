/**
 * The Temporal-free descriptors a workflow's contract (workflows/<name>.contract.ts) is declared with: its type name,
 * task queue, input, result, signals and updates. The domain starts and messages workflows with them through
 * WorkflowGateway; the workflows and src/temporal make Temporal's definitions from them (workflows/messages.ts).
 * Workflows import this file at run time: it must stay deterministic and import nothing but types.
 */
import type { TaskQueueRole } from '../task-queues';

/** Where a descriptor keeps the types it carries; never set at run time. */
declare const carries: unique symbol;

/** A signal a workflow takes: its name, and the arguments it is sent with. */
export interface SignalDef<Name extends string = string, Args extends unknown[] = unknown[]> {
  readonly kind: 'signal';
  readonly name: Name;
  readonly [carries]?: { args: Args };
}

/** An update a workflow takes: its name, the arguments it is sent with, and what it answers. */
export interface UpdateDef<Name extends string = string, Args extends unknown[] = unknown[], Result = unknown> {
  readonly kind: 'update';
  readonly name: Name;
  readonly [carries]?: { args: Args; result: Result };
}

/** A workflow's contract: its type name, its task queue, its input and result, and the messages it takes. */
export interface WorkflowDef<
  Name extends string = string,
  Input = unknown,
  Result = unknown,
  Signals extends Record<string, SignalDef> = Record<string, SignalDef>,
  Updates extends Record<string, UpdateDef> = Record<string, UpdateDef>,
> {
  readonly name: Name;
  readonly taskQueue: TaskQueueRole;
  readonly signals: Signals;
  readonly updates: Updates;
  readonly [carries]?: { input: Input; result: Result };
}

export type InputOf<W extends WorkflowDef> = W extends WorkflowDef<string, infer I> ? I : never;
export type ResultOf<W extends WorkflowDef> = W extends WorkflowDef<string, unknown, infer R> ? R : never;
export type ArgsOf<M extends SignalDef | UpdateDef> = M extends SignalDef<string, infer A> | UpdateDef<string, infer A> ? A : never;
export type UpdateResultOf<U extends UpdateDef> = U extends UpdateDef<string, unknown[], infer R> ? R : never;
export type SignalOf<W extends WorkflowDef> = W['signals'][keyof W['signals']];
export type UpdateOf<W extends WorkflowDef> = W['updates'][keyof W['updates']];

/** A signal sent with `Args`; its name is its key in the contract's `signals`. */
export const signal = <Args extends unknown[] = []>(): { kind: 'signal'; [carries]?: { args: Args } } => ({ kind: 'signal' });

/** An update sent with `Args` that answers `Result`; its name is its key in the contract's `updates`. */
export const update = <Args extends unknown[], Result>(): { kind: 'update'; [carries]?: { args: Args; result: Result } } => ({ kind: 'update' });

type Named<M, Kind extends 'signal' | 'update'> = {
  [K in keyof M & string]: Kind extends 'signal'
    ? SignalDef<K, M[K] extends { [carries]?: { args: infer A extends unknown[] } } ? A : never>
    : UpdateDef<K, M[K] extends { [carries]?: { args: infer A extends unknown[] } } ? A : never, M[K] extends { [carries]?: { result: infer R } } ? R : never>;
};

const named = <M extends Record<string, { kind: string }>>(messages: M) =>
  Object.fromEntries(Object.entries(messages).map(([name, message]) => [name, { ...message, name }]));

/**
 * Declares a workflow's contract: `workflowDef<Input, Result>()({ name, taskQueue, signals, updates })`. Each
 * message is named by its key, so its name is written once.
 */
export const workflowDef =
  <Input, Result>() =>
  <
    const Name extends string,
    S extends Record<string, { kind: 'signal' }> = Record<never, never>,
    U extends Record<string, { kind: 'update' }> = Record<never, never>,
  >(contract: {
    name: Name;
    taskQueue: TaskQueueRole;
    signals?: S;
    updates?: U;
  }): WorkflowDef<Name, Input, Result, Named<S, 'signal'>, Named<U, 'update'>> => ({
    name: contract.name,
    taskQueue: contract.taskQueue,
    signals: named(contract.signals ?? {}) as Named<S, 'signal'>,
    updates: named(contract.updates ?? {}) as Named<U, 'update'>,
  });
