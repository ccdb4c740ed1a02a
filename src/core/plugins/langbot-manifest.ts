// Lenient reading of a LangBot plugin's runner component: capability keys, permission groups and
// operations lbot does not know are set aside (kept and reported, granting nothing) instead of
// dropping the runner; ids, names and paths stay strict (docs/langbot-plugins.md).
import { isRecord } from '../json.js';
import { CapabilitiesSchema, PERMISSION_OPERATIONS, type Execution } from '../protocol/index.js';

export type Unrecognized = { capabilities: Record<string, unknown>; permissions: Record<string, unknown> };

/** A plugin that runs on LangBot's own SDK (`execution.python`) gets the lenient reading. */
export function isLangbotExecution(execution: Execution): boolean {
  return 'python' in execution;
}

const KNOWN_CAPABILITIES = new Set(Object.keys(CapabilitiesSchema.shape));
const KNOWN_OPERATIONS: ReadonlyMap<string, ReadonlySet<string>> = new Map(Object.entries(PERMISSION_OPERATIONS).map(([g, ops]) => [g, new Set<string>(ops)]));
/** Groups whose values are free-form names, so nothing in them is unknown. */
const OPEN_GROUPS = new Set(['platform_api']);

function nonEmpty(u: Unrecognized): boolean {
  return Object.keys(u.capabilities).length > 0 || Object.keys(u.permissions).length > 0;
}

/**
 * Splits a component document into what the strict schema accepts and what lbot does not know.
 * Returns the input unchanged when nothing is unknown; never mutates it.
 */
export function setAsideUnrecognized(doc: unknown): { doc: unknown; unrecognized: Unrecognized | null } {
  if (!isRecord(doc) || !isRecord(doc.spec)) return { doc, unrecognized: null };
  const unrecognized: Unrecognized = { capabilities: {}, permissions: {} };
  const spec: Record<string, unknown> = { ...doc.spec };
  if (isRecord(spec.capabilities)) {
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(spec.capabilities)) {
      if (KNOWN_CAPABILITIES.has(key)) kept[key] = value;
      else unrecognized.capabilities[key] = value;
    }
    spec.capabilities = kept;
  }
  if (isRecord(spec.permissions)) {
    const kept: Record<string, unknown> = {};
    for (const [group, value] of Object.entries(spec.permissions)) {
      const known = KNOWN_OPERATIONS.get(group);
      if (OPEN_GROUPS.has(group)) kept[group] = value;
      else if (!known) unrecognized.permissions[group] = value;
      else if (Array.isArray(value)) {
        // A known group keeps its known operations; a malformed entry (not a string) stays for the schema to refuse.
        const unknownOps = value.filter((op): op is string => typeof op === 'string' && !known.has(op));
        kept[group] = value.filter((op) => typeof op !== 'string' || known.has(op));
        if (unknownOps.length > 0) unrecognized.permissions[group] = unknownOps;
      } else kept[group] = value;
    }
    spec.permissions = kept;
  }
  if (!nonEmpty(unrecognized)) return { doc, unrecognized: null };
  return { doc: { ...doc, spec }, unrecognized };
}

/** `capabilities.steering, permissions.interactions` for a warning line. */
export function describeUnrecognized(u: Unrecognized): string {
  const names = [
    ...Object.keys(u.capabilities).map((k) => `capabilities.${k}`),
    ...Object.entries(u.permissions).map(([g, v]) =>
      KNOWN_OPERATIONS.has(g) && Array.isArray(v) ? `permissions.${g}: ${v.map(String).join(', ')}` : `permissions.${g}`,
    ),
  ];
  return names.join('; ');
}

/** The discovery warning's text for a runner's set-aside declarations (after `<file>: `). */
export function unrecognizedNote(u: Unrecognized): string {
  return `lbot does not understand ${describeUnrecognized(u)}; ignored (they grant nothing)`;
}
