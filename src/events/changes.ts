import { isDeepStrictEqual } from 'node:util';
import type { ChangesA, ChangesB } from '../generated/schemas';

/** Fields every record has that say nothing about what changed. */
const BOOKKEEPING = new Set(['id', 'created_at', 'updated_at']);

/**
 * The fields that really changed between two snapshots of a record (its wire form before and after an
 * update), as the events carry them: {old, new} in shape A, {from, to} in shape B, and {added, removed}
 * for list fields kept as sets (regions, skills). Fields equal in both snapshots are left out.
 */
export function changesBetween(before: object, after: object, style: 'A', sets?: readonly string[]): ChangesA;
export function changesBetween(before: object, after: object, style: 'B', sets?: readonly string[]): ChangesB;
export function changesBetween(before: object, after: object, style: 'A' | 'B', sets: readonly string[] = []): ChangesA | ChangesB {
  const was = before as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  const changes: Record<string, unknown> = {};
  for (const field of new Set([...Object.keys(was), ...Object.keys(now)])) {
    if (BOOKKEEPING.has(field)) continue;
    const old = was[field] ?? null;
    const current = now[field] ?? null;
    if (isDeepStrictEqual(old, current)) continue;
    if (sets.includes(field) && Array.isArray(old) && Array.isArray(current)) {
      const added = current.filter((v) => !old.includes(v));
      const removed = old.filter((v) => !current.includes(v));
      // A reordered set has not changed.
      if (added.length || removed.length) changes[field] = { added, removed };
    } else {
      changes[field] = style === 'A' ? { old, new: current } : { from: old, to: current };
    }
  }
  return changes as ChangesA | ChangesB;
}
