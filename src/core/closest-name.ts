// The "did you mean" policy for a mistyped name (a command, a flag, a config key): the nearest candidate
// within an edit distance that grows with the name's length, or null.
import { closestMatch } from 'leven';

export function closestName(name: string, candidates: readonly string[]): string | null {
  return closestMatch(name, [...candidates], { maxDistance: Math.max(2, Math.floor(name.length / 3)) }) ?? null;
}
