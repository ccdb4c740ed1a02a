// Manifest YAML: the YAML 1.2 core types, and the inputs a hostile plugin package would ship.
import { describe, expect, it } from 'vitest';
import { parseManifestYaml } from '../../../src/core/plugins/manifest-yaml.js';

describe('parseManifestYaml', () => {
  it('reads a manifest with the core schema types', () => {
    const text = [
      'apiVersion: langbot/v1',
      'kind: Plugin',
      'metadata: {author: acme, name: echo, version: 0.1.0}',
      'spec:',
      '  components:',
      '    AgentRunner:',
      '      fromDirs:',
      '        - path: components/agent_runner/',
      'limits: {count: 3, ratio: 0.5, on: true, off: null}',
      'when: 2026-12-04',
      'octal: 0o17',
    ].join('\n');
    expect(parseManifestYaml(text)).toEqual({
      apiVersion: 'langbot/v1',
      kind: 'Plugin',
      metadata: { author: 'acme', name: 'echo', version: '0.1.0' },
      spec: { components: { AgentRunner: { fromDirs: [{ path: 'components/agent_runner/' }] } } },
      limits: { count: 3, ratio: 0.5, on: true, off: null },
      // No timestamp type in the core schema: a date stays the string the author wrote.
      when: '2026-12-04',
      octal: 15,
    });
  });

  it('allows an alias of a scalar', () => {
    expect(parseManifestYaml('a: &v 1.2.3\nb: *v\n')).toEqual({ a: '1.2.3', b: '1.2.3' });
  });

  it('refuses an alias bomb before anything walks it', () => {
    // Nine levels of nine aliases each: 9^9 (387 million) leaves if expanded, a few hundred bytes as text.
    const lines = ['l0: &l0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i <= 9; i++)
      lines.push(
        `l${i}: &l${i} [${Array(9)
          .fill(`*l${i - 1}`)
          .join(', ')}]`,
      );
    expect(() => parseManifestYaml(lines.join('\n'))).toThrow('aliases of mappings or sequences are not supported');
  });

  it('refuses an alias of a mapping, even once', () => {
    expect(() => parseManifestYaml('base: &b {x: 1}\nother: *b\n')).toThrow(/aliases of mappings/);
  });

  it('does not apply merge keys', () => {
    expect(parseManifestYaml('a: {x: 1}\nb: {<<: 2, y: 3}\n')).toEqual({ a: { x: 1 }, b: { '<<': 2, y: 3 } });
  });

  it('refuses duplicate keys', () => {
    expect(() => parseManifestYaml('kind: Plugin\nkind: AgentRunner\n')).toThrow('duplicated mapping key at line 2, column 1');
  });

  it('refuses a document that is not YAML', () => {
    expect(() => parseManifestYaml('kind: Plugin\nmetadata: [unclosed\n')).toThrow('unexpected end of the stream within a flow collection at line 3, column 1');
  });
});
