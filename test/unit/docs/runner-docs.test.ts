// The runner docs list exactly the protocol's methods: the proxy method table plus the wire methods.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROXY_METHODS, WIRE_METHODS } from '../../../src/core/protocol/index.js';

const docsDir = fileURLToPath(new URL('../../../docs/', import.meta.url));
const allMethods = [...Object.values(WIRE_METHODS), ...PROXY_METHODS].sort();

function firstColumnNames(table: string): string[] {
  return table
    .split('\n')
    .map((line) => /^\|\s*`([^`]+)`\s*\|/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

describe('runner docs', () => {
  it('writing-a-runner.md lists exactly the proxy and wire methods', () => {
    const text = readFileSync(`${docsDir}writing-a-runner.md`, 'utf8');
    const table = /<!-- methods:begin -->([\s\S]*?)<!-- methods:end -->/.exec(text)?.[1] ?? '';
    expect(firstColumnNames(table).sort()).toEqual(allMethods);
  });

  it('protocol.md documents every method', () => {
    const text = readFileSync(`${docsDir}protocol.md`, 'utf8');
    for (const method of allMethods) expect(text, method).toContain(`\`${method}\``);
  });
});
