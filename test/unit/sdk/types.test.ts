// Guards the public types of lbot/sdk with expectTypeOf; the last test type-checks this very file
// with the TypeScript compiler, so a type regression fails the suite, not only an editor.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expectTypeOf, it, expect } from 'vitest';
import {
  ApiCallError,
  completed,
  definePlugin,
  defineRunner,
  message,
  type AgentApiError,
  type Message,
  type ModelReply,
  type Plugin,
  type ProxyArgs,
  type RunContext,
  type Runner,
  type RunnerApi,
  type RunnerContext,
  type RunnerResult,
} from '../../../src/sdk/index.js';

describe('lbot/sdk public types', () => {
  it('types the runner context and results', () => {
    expectTypeOf<RunnerContext>().toMatchTypeOf<RunContext>();
    expectTypeOf<RunnerContext['signal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<RunnerContext['input']['text']>().toEqualTypeOf<string | null>();
    expectTypeOf(message('x')).toEqualTypeOf<RunnerResult>();
    expectTypeOf(completed).parameter(0).toMatchTypeOf<{ message?: string | Record<string, unknown>; finish_reason?: string } | undefined>();
    expectTypeOf(definePlugin).returns.toEqualTypeOf<Plugin>();
    expectTypeOf(defineRunner).parameter(0).toEqualTypeOf<Runner>();
  });

  it('derives API argument and result types from the proxy method table', () => {
    expectTypeOf<ProxyArgs<'state.get'>>().toEqualTypeOf<{ scope: 'conversation' | 'actor' | 'subject' | 'runner'; key: string }>();
    expectTypeOf<ProxyArgs<'history.page'>>().not.toHaveProperty('run_id');
    expectTypeOf<RunnerApi['call']>().toBeFunction();
    expectTypeOf<ReturnType<RunnerApi['models']['invoke']>>().toEqualTypeOf<Promise<Message>>();
    expectTypeOf<ReturnType<RunnerApi['models']['invokeReply']>>().toEqualTypeOf<Promise<ModelReply>>();
    expectTypeOf<ReturnType<RunnerApi['models']['streamReply']>>().toEqualTypeOf<Promise<ModelReply>>();
    expectTypeOf<ModelReply['usage']>().toMatchTypeOf<{ prompt_tokens: number; completion_tokens: number; total_tokens: number } | null>();
    expectTypeOf<ModelReply['finish_reason']>().toEqualTypeOf<string | null>();
    expectTypeOf<ReturnType<RunnerApi['state']['delete']>>().toEqualTypeOf<Promise<boolean>>();
    expectTypeOf<ReturnType<RunnerApi['storage']['get']>>().toEqualTypeOf<Promise<Buffer>>();
    expectTypeOf<Awaited<ReturnType<RunnerApi['history']['page']>>['items'][number]['role']>().toEqualTypeOf<string>();
    expectTypeOf<Awaited<ReturnType<RunnerApi['state']['list']>>>().toEqualTypeOf<{ keys: string[]; has_more: boolean }>();
    expectTypeOf<ReturnType<RunnerApi['request']>>().toEqualTypeOf<Promise<unknown>>();
    expectTypeOf<ApiCallError['error']>().toEqualTypeOf<AgentApiError>();
    expectTypeOf<ApiCallError['code']>().toEqualTypeOf<
      'unauthorized' | 'not_found' | 'deadline_exceeded' | 'payload_too_large' | 'rate_limited' | 'invalid_argument' | 'runtime_error'
    >();
  });

  it('refuses wrong API usage at compile time', () => {
    const check = (api: RunnerApi): void => {
      // @ts-expect-error: unknown scope
      void api.state.get('galaxy', 'k');
      // @ts-expect-error: unknown method
      void api.call('nope.method', {});
      // @ts-expect-error: missing required argument
      void api.call('tools.call', {});
      // @ts-expect-error: run_id is added by the client
      void api.call('events.get', { event_id: 'e', run_id: 'r' } satisfies ProxyArgs<'events.get'>);
      void api.call('events.get', { event_id: 'e' });
    };
    expect(check).toBeTypeOf('function');
  });

  // The peer test's @ts-expect-error lines (which side may send which control method) ride along.
  it('this file and the protocol peer test type-check', () => {
    const here = fileURLToPath(import.meta.url);
    const root = path.resolve(path.dirname(here), '../../..');
    const checked = [here, path.join(root, 'test/unit/protocol/peer.test.ts')];
    const configFile = ts.readConfigFile(path.join(root, 'tsconfig.json'), (f) => ts.sys.readFile(f));
    const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
    const program = ts.createProgram(checked, { ...parsed.options, noEmit: true, rootDir: root });
    const diagnostics = ts.getPreEmitDiagnostics(program).filter((d) => d.file !== undefined && checked.includes(d.file.fileName));
    const text = diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n');
    expect(text).toBe('');
  }, 180_000);
});
