import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A stretch of time on the monotonic clock V8 stamps samples with (process.hrtime), in microseconds. */
export interface Window {
  label: string;
  from: number;
  to: number;
}

export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

/** Where a frame comes from: a package under node_modules, our own file, or Node/V8 itself. */
function origin(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (url.startsWith('file://') || url.startsWith('/')) {
    // Compiled copies (dist/bench-…/src/x.js) are named after their source.
    return path.relative(PROJECT_ROOT, url.replace(/^file:\/\//, '')).replace(/^dist\/[^/]+\//, '');
  }
  return url || '(native)';
}

/**
 * The summary of a V8 CPU profile (`node --cpu-prof`) during `window`: share of the busy samples by origin
 * (package or file) and the functions with the most self time. Idle time is left out. Null when the profile has no
 * busy sample in the window (its process did not run then).
 */
export function summariseProfile(file: string, window: Window, top = 10): string | null {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfTime = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= window.from && at <= window.to) selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  });
  let busy = 0;
  const byOrigin = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, micros] of selfTime) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    busy += micros;
    const from = origin(url);
    byOrigin.set(from, (byOrigin.get(from) ?? 0) + micros);
    const name = `${functionName || '(anonymous)'} ${from}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  }
  // Time spent in (and below) each function of the project: which step of a request costs what.
  const inclusive = new Map<string, number>();
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  for (const [id, micros] of selfTime) {
    const { functionName } = byId.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const from = origin(frame.url);
      if (!/^(src|activities|workflows)\//.test(from)) continue;
      const name = `${frame.functionName || '(anonymous)'} ${from}:${frame.lineNumber + 1}`;
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
    }
  }
  if (busy === 0) return null;
  const share = (micros: number) => `${((100 * micros) / busy).toFixed(1).padStart(5)}%`;
  const rank = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `  ${window.label}: busy ${(busy / 1e6).toFixed(1)} s of ${((window.to - window.from) / 1e6).toFixed(1)} s; self time by origin:`,
    ...rank(byOrigin).map(([name, micros]) => `    ${share(micros)}  ${name}`),
    '  functions with the most self time:',
    ...rank(byFunction).map(([name, micros]) => `    ${share(micros)}  ${name}`),
    "  the project's functions by time in and below them:",
    ...rank(inclusive).map(([name, micros]) => `    ${share(micros)}  ${name}`),
  ].join('\n');
}
