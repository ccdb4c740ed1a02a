// Binding config against the runner's config schema: defaults, selector shapes, sentinels, required
// fields, and the model / knowledge-base references that authorize resources (runner-protocol.md §2.8).
import type { ConfigItem } from '../protocol/manifest.js';
import { ApiError } from './api-error.js';
import { isRecord } from '../json.js';

const SENTINELS = new Set(['', '__none__', '__none']);
const TYPE_ALIASES: Record<string, string> = {
  number: 'float',
  json: 'text',
  'select-llm-model': 'llm-model-selector',
  'select-knowledge-bases': 'knowledge-base-multi-selector',
};
const DISPLAY_ONLY = new Set(['webhook-url', 'embed-code', 'qr-code-login']);
const SINGLE_SELECTORS = new Set([
  'llm-model-selector',
  'rerank-model-selector',
  'embedding-model-selector',
  'knowledge-base-selector',
  'bot-selector',
  'plugin-selector',
]);

export function isSentinel(value: unknown): boolean {
  return typeof value === 'string' && SENTINELS.has(value);
}

export function itemType(item: ConfigItem): string {
  return TYPE_ALIASES[item.type] ?? item.type;
}

function isStored(item: ConfigItem): boolean {
  return item.name !== '' && !DISPLAY_ONLY.has(itemType(item)) && !item.name.startsWith('__system.');
}

function normalizeFallback(value: unknown): { primary: string; fallbacks: string[] } | undefined {
  if (typeof value === 'string') return isSentinel(value) ? undefined : { primary: value, fallbacks: [] };
  if (!isRecord(value)) return undefined;
  const primary = typeof value.primary === 'string' && !isSentinel(value.primary) ? value.primary : '';
  const fallbacks = Array.isArray(value.fallbacks) ? value.fallbacks.filter((f): f is string => typeof f === 'string' && !isSentinel(f)) : [];
  return { primary, fallbacks };
}

function typeError(name: string, expected: string): ApiError {
  return new ApiError('invalid_argument', `binding config key "${name}" must be ${expected}`, 'config_invalid', { key: name });
}

/** Checks one present value against its item type; returns the normalized value or undefined (absent). */
function normalizeValue(item: ConfigItem, value: unknown): unknown {
  const type = itemType(item);
  if (SINGLE_SELECTORS.has(type)) {
    if (isSentinel(value) || value === null) return undefined;
    if (typeof value !== 'string') throw typeError(item.name, 'a string id');
    return value;
  }
  switch (type) {
    case 'model-fallback-selector':
      return normalizeFallback(value);
    case 'knowledge-base-multi-selector':
    case 'tools-selector':
    case 'array[string]': {
      if (!Array.isArray(value)) throw typeError(item.name, 'an array of strings');
      return value.filter((v): v is string => typeof v === 'string' && !isSentinel(v));
    }
    case 'string':
    case 'text':
    case 'select':
      if (typeof value !== 'string') throw typeError(item.name, 'a string');
      return value;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw typeError(item.name, 'an integer');
      return value;
    case 'float':
      if (typeof value !== 'number') throw typeError(item.name, 'a number');
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw typeError(item.name, 'a boolean');
      return value;
    case 'prompt-editor':
      return Array.isArray(value) ? value : [{ role: 'system', content: '' }];
    default:
      return value; // unknown and future types pass through unchanged
  }
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

/**
 * The config a runner receives (lbot rule of §2.8): defaults applied, selectors normalized, sentinels
 * removed, types checked, required items present. Keys the schema does not describe are preserved.
 */
export function normalizeRunnerConfig(schema: readonly ConfigItem[], stored: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(stored);
  for (const item of schema) {
    if (!isStored(item)) continue;
    if (out[item.name] === undefined && 'default' in item && item.default !== undefined) out[item.name] = structuredClone(item.default);
    if (out[item.name] === undefined) continue;
    const value = normalizeValue(item, out[item.name]);
    if (value === undefined) delete out[item.name];
    else out[item.name] = value;
  }
  for (const item of schema) {
    if (isStored(item) && item.required === true && isEmpty(out[item.name])) {
      throw new ApiError('invalid_argument', `binding config is missing the required key "${item.name}"`, 'config_invalid', { key: item.name });
    }
  }
  return out;
}

export type ModelRef = { id: string; kind: 'llm' | 'rerank' };

/** Model references of a normalized config, in schema order (§2.8 step 4, last bullet). */
export function modelRefs(schema: readonly ConfigItem[], config: Record<string, unknown>): ModelRef[] {
  const refs: ModelRef[] = [];
  for (const item of schema) {
    const value = config[item.name];
    if (value === undefined) continue;
    const type = itemType(item);
    if (type === 'model-fallback-selector') {
      const v = normalizeFallback(value);
      if (v?.primary) refs.push({ id: v.primary, kind: 'llm' });
      for (const f of v?.fallbacks ?? []) refs.push({ id: f, kind: 'llm' });
    } else if (type === 'llm-model-selector' && typeof value === 'string' && !isSentinel(value)) {
      refs.push({ id: value, kind: 'llm' });
    } else if (type === 'rerank-model-selector' && typeof value === 'string' && !isSentinel(value)) {
      refs.push({ id: value, kind: 'rerank' });
    }
  }
  return refs;
}

/** Knowledge-base ids selected by `knowledge-base-multi-selector` items (union, de-duplicated). */
export function knowledgeBaseRefs(schema: readonly ConfigItem[], config: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  for (const item of schema) {
    if (itemType(item) !== 'knowledge-base-multi-selector') continue;
    const value = config[item.name];
    if (!Array.isArray(value)) continue;
    for (const v of value) if (typeof v === 'string' && !isSentinel(v)) ids.add(v);
  }
  return [...ids];
}
