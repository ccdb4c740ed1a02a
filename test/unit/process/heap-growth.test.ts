// serve and worker bound V8's heap growth unless node was started with a value of its own.
import { expect, it } from 'vitest';
import { boundHeapGrowth } from '../../../src/runtime/process/heap-growth.js';

it('sets the bound when node has none', () => {
  expect(boundHeapGrowth(['--enable-source-maps'])).toBe(true);
});

it.each([['--heap-growing-percent=80'], ['--heap_growing_percent=80'], ['--heap-growing-percent']])('keeps the value node was started with (%s)', (flag) => {
  expect(boundHeapGrowth([flag])).toBe(false);
});
