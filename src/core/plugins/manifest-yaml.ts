// Parses plugin manifest YAML. js-yaml (CORE schema: YAML 1.2 types, no merge keys, no timestamps) loads in a
// fraction of the time of `yaml`, which matters because every `lbot run` reads manifests before it can start
// the runner. js-yaml hands back an alias as a shared reference, so a few lines of anchors can describe a graph
// that schema validation would walk billions of times: a mapping or sequence reached twice is refused.
import { CORE_SCHEMA, YAMLException, load } from 'js-yaml';

export function parseManifestYaml(text: string): unknown {
  let value: unknown;
  try {
    value = load(text, { schema: CORE_SCHEMA });
  } catch (err) {
    // js-yaml's message ends in a code excerpt; the reason and a 1-based position are what a reader needs.
    if (err instanceof YAMLException && err.mark) throw new Error(`${err.reason} at line ${err.mark.line + 1}, column ${err.mark.column + 1}`);
    throw err;
  }
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
