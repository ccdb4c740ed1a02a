// Parses plugin manifest YAML. js-yaml (CORE schema: YAML 1.2 types, no merge keys, no timestamps) loads in a
// fraction of the time of `yaml`, which matters because every `lbot run` reads manifests before it can start
// the runner. js-yaml hands back an alias as a shared reference, so a few lines of anchors can describe a graph
// that schema validation would walk billions of times: a mapping or sequence reached twice is refused.
import { CORE_SCHEMA, load } from 'js-yaml';

export function parseManifestYaml(text: string): unknown {
  const value: unknown = load(text, { schema: CORE_SCHEMA });
  refuseSharedNodes(value);
  return value;
}

function refuseSharedNodes(root: unknown): void {
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (seen.has(node)) throw new Error('aliases of mappings or sequences are not supported');
    seen.add(node);
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push(child);
  }
}
