// The local agent's rules, driven in process through the SDK's test transport (params validated like the
// host, abandoned calls rejected): the tool loop, fallback, batches, terminate, the round cap, cancel,
// refused and ungranted tools, token budgets and the compaction checkpoint.
import { describe, expect, it } from 'vitest';
import { ApiCallError, runInProcess, type ApiHandlers, type ContextOverrides, type Message, type RunnerResult } from 'lbot/sdk';
import plugin from '../../../runners/local-agent/dist/main.js';

type Step = {
  content?: string;
  tool_calls?: Array<{ id: string; name: string; arguments: Record<string, unknown> | string }>;
  fail?: ApiCallError;
  failAfterChunk?: ApiCallError;
  hang?: boolean;
};
type StreamParams = { model_id: string; messages: Message[]; tools: Array<{ name: string }>; context_id?: string; keep_context?: boolean };

const upstream = (message: string, extra: Record<string, unknown> = {}) =>
  new ApiCallError('models.stream', { code: 'runtime_error', message, retryable: true, details: { reason: 'downstream_error', ...extra } });

/** A scripted model (one step per call, per model id or shared), a tokenizer of one token per word, and tools. */
function fakeHost(opts: {
  steps: Step[] | Record<string, Step[]>;
  tools?: Record<string, (params: Record<string, unknown>) => unknown>;
  window?: number;
  history?: Array<{ seq: number; role: string; content: string; event_id?: string }>;
  state?: Map<string, unknown>;
  summary?: string;
  countFails?: boolean;
  /** The host forgets every context (as after an eviction): a continued call is refused context_unknown. */
  forgetContexts?: boolean;
}) {
  const calls: Array<{ model_id: string; messages: Message[]; tools: string[] }> = [];
  // Model contexts as the host keeps them: `calls` gets the whole conversation, `sent` what went over the wire.
  const contexts = new Map<string, Message[]>();
  const sent: Array<{ context_id: string | null; messages: number }> = [];
  const toolCalls: Array<{ name: string; params: Record<string, unknown> }> = [];
  const details: string[] = [];
  const invokes: Message[][] = [];
  const queues = Array.isArray(opts.steps) ? { '*': [...opts.steps] } : Object.fromEntries(Object.entries(opts.steps).map(([k, v]) => [k, [...v]]));
  const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
  const text = (m: Message) => (typeof m.content === 'string' ? m.content : '') + (m.tool_calls ? JSON.stringify(m.tool_calls) : '');
  const handlers: ApiHandlers = {
    'models.count_tokens': (p) => {
      if (opts.countFails)
        throw new ApiCallError('models.count_tokens', {
          code: 'not_found',
          message: 'no tokenizer for this model',
          retryable: false,
          details: { reason: 'tokenizer_not_found' },
        });
      const n = p.messages.reduce((a, m) => a + words(text(m)), 0) + words(p.text ?? '') + p.tools.length;
      return { tokens: n, context_window: opts.window ?? 100_000, tokenizer: 'words' };
    },
    'tools.get_detail': (p) => {
      details.push(p.tool_name);
      return { tool: { name: p.tool_name, description: `the ${p.tool_name} tool`, parameters: { type: 'object', properties: {} } } };
    },
    'tools.call': async (p) => {
      toolCalls.push({ name: p.tool_name, params: p.parameters });
      const fn = opts.tools?.[p.tool_name];
      if (!fn)
        throw new ApiCallError('tools.call', {
          code: 'unauthorized',
          message: `tool ${p.tool_name} is not granted`,
          retryable: false,
          details: { reason: 'resource_not_authorized' },
        });
      return { result: await fn(p.parameters), tool_response: null };
    },
    'models.stream': async (p: StreamParams, t) => {
      sent.push({ context_id: p.context_id ?? null, messages: p.messages.length });
      const base = p.context_id === undefined ? [] : opts.forgetContexts ? undefined : contexts.get(p.context_id);
      if (!base)
        throw new ApiCallError('models.stream', {
          code: 'invalid_argument',
          message: 'context unknown',
          retryable: false,
          details: { reason: 'context_unknown' },
        });
      const whole = [...base, ...p.messages];
      const context_id = p.context_id !== undefined || p.keep_context ? `ctx-${contexts.size}` : undefined;
      if (context_id) contexts.set(context_id, structuredClone(whole));
      calls.push({ model_id: p.model_id, messages: structuredClone(whole), tools: p.tools.map((x) => x.name) });
      const queue = queues[p.model_id] ?? queues['*'] ?? [];
      const step = queue.shift() ?? { content: 'done' };
      if (step.fail) throw step.fail;
      if (step.content) t.chunk({ content: step.content.slice(0, 2) });
      if (step.failAfterChunk) throw step.failAfterChunk;
      if (step.hang) await new Promise(() => {});
      if (step.content) t.chunk({ content: step.content });
      const tool_calls = step.tool_calls?.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
      }));
      return {
        message: { role: 'assistant', content: step.content ?? null, ...(tool_calls ? { tool_calls } : {}) },
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
        finish_reason: tool_calls ? 'tool_calls' : 'stop',
        model: p.model_id,
        ...(context_id ? { context_id } : {}),
      };
    },
    'models.invoke': (p) => {
      invokes.push(p.messages);
      return {
        message: { role: 'assistant', content: opts.summary ?? '{"goal":"answer questions","progress":["talked about call_abc123XYZ"]}' },
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      };
    },
    'history.page': () => ({
      items: (opts.history ?? [])
        .map((h) => ({
          transcript_id: `t${h.seq}`,
          event_id: h.event_id ?? `ev-${h.seq}`,
          conversation_id: 'c1',
          thread_id: null,
          role: h.role,
          item_type: 'message',
          content: h.content,
          content_json: null,
          artifact_refs: [],
          seq: h.seq,
          cursor: String(h.seq),
          created_at: null,
          metadata: {},
        }))
        .reverse(),
      next_cursor: null,
      prev_cursor: null,
      has_more: false,
    }),
    'state.get': (p) => ({ value: opts.state?.get(p.key) ?? null }),
    'state.set': (p) => {
      opts.state?.set(p.key, p.value);
      return { success: true };
    },
  };
  return { handlers, calls, toolCalls, details, invokes, sent };
}

const MODELS = [
  { model_id: 'gpt', model_type: 'llm', provider: 'openai' },
  { model_id: 'backup', model_type: 'llm', provider: 'openai' },
];
const tool = (tool_name: string) => ({ tool_name, tool_type: 'native', description: null });

function context(config: Record<string, unknown>, extra: ContextOverrides = {}): ContextOverrides {
  const { resources, ...rest } = extra;
  return {
    input: { text: 'what is 6*7?', contents: [{ type: 'text', text: 'what is 6*7?' }], attachments: [], message_chain: null },
    resources: {
      models: MODELS,
      tools: [tool('exec')],
      knowledge_bases: [],
      files: [],
      storage: { plugin_storage: false, workspace_storage: false },
      platform_capabilities: {},
      ...resources,
    },
    config: { model: { primary: 'gpt', fallbacks: ['backup'] }, ...config },
    ...rest,
  };
}

const types = (rs: RunnerResult[]) => rs.map((r) => r.type);
const last = (rs: RunnerResult[]) => rs.at(-1);
const exec42 = { id: 'call_1', name: 'exec', arguments: { command: "python3 -c 'print(6*7)'" } };

describe('local agent loop', () => {
  it('runs the tool the model asks for, feeds the result back and answers; usage is merged', async () => {
    const h = fakeHost({
      steps: [{ content: 'Let me compute.', tool_calls: [exec42] }, { content: 'It is 42.' }],
      tools: { exec: () => ({ stdout: '42\n', exit_code: 0 }) },
    });
    const rs = await runInProcess(plugin, 'default', context({}), { api: h.handlers });
    // Deltas come as the model streams (the newest text replaces a pending one), each message after its deltas.
    expect(types(rs).filter((t, i, all) => t !== 'message.delta' || all[i - 1] !== 'message.delta')).toEqual([
      'message.delta',
      'message.completed',
      'tool.call.started',
      'tool.call.completed',
      'message.delta',
      'message.completed',
      'run.completed',
    ]);
    expect(h.toolCalls).toEqual([{ name: 'exec', params: { command: "python3 -c 'print(6*7)'" } }]);
    const second = h.calls[1]?.messages ?? [];
    expect(second.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '{"stdout":"42\\n","exit_code":0}' });
    expect(second.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_1' }] });
    expect(rs.filter((r) => r.type === 'message.completed').at(-1)?.data).toMatchObject({ message: { content: 'It is 42.' } });
    expect(last(rs)?.data).toMatchObject({ finish_reason: 'stop', usage: { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24, model_calls: 2 } });
    // exec is offered, so the box guidance is in the request
    expect(JSON.stringify(h.calls[0]?.messages)).toContain('`exec` tool');
  });

  it('falls back to the next model before any output, and keeps the committed model for later turns', async () => {
    const h = fakeHost({
      steps: { gpt: [{ fail: upstream('upstream 503') }], backup: [{ tool_calls: [exec42] }, { content: '42' }] },
      tools: { exec: () => 'ok' },
    });
    const rs = await runInProcess(plugin, 'default', context({}), { api: h.handlers });
    expect(last(rs)?.type).toBe('run.completed');
    expect(h.calls.map((c) => c.model_id)).toEqual(['gpt', 'backup', 'backup']);
  });

  it('does not fall back once the model has produced output: the run fails with runner.llm_error', async () => {
    const h = fakeHost({
      steps: { gpt: [{ content: 'partial answer', failAfterChunk: upstream('connection dropped mid-response') }], backup: [{ content: 'never' }] },
    });
    const rs = await runInProcess(plugin, 'default', context({}), { api: h.handlers });
    expect(h.calls.map((c) => c.model_id)).toEqual(['gpt']);
    expect(last(rs)).toMatchObject({ type: 'run.failed', data: { code: 'runner.llm_error', retryable: true } });
    expect(String(last(rs)?.data?.error)).toContain('connection dropped');
  });

  it('fails with runner.llm_error when every model fails before output', async () => {
    const h = fakeHost({ steps: { gpt: [{ fail: upstream('503') }], backup: [{ fail: upstream('401 bad key', { status: 401 }) }] } });
    const rs = await runInProcess(plugin, 'default', context({}), { api: h.handlers });
    expect(h.calls.map((c) => c.model_id)).toEqual(['gpt', 'backup']);
    expect(last(rs)).toMatchObject({ type: 'run.failed', data: { code: 'runner.llm_error' } });
  });

  for (const mode of ['parallel', 'serial'] as const) {
    it(`a ${mode} batch appends the results in the model's order`, async () => {
      let active = 0;
      let peak = 0;
      const slow = async (ms: number, out: string) => {
        active += 1;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, ms));
        active -= 1;
        return out;
      };
      const h = fakeHost({
        steps: [
          {
            tool_calls: [
              { id: 'a', name: 'exec', arguments: { command: 'slow' } },
              { id: 'b', name: 'read', arguments: { path: '/workspace/x' } },
            ],
          },
          { content: 'both done' },
        ],
        tools: { exec: () => slow(150, 'first'), read: () => slow(1, 'second') },
      });
      const rs = await runInProcess(plugin, 'default', context({ 'tool-execution-mode': mode }, { resources: { tools: [tool('exec'), tool('read')] } }), {
        api: h.handlers,
      });
      expect(last(rs)?.type, JSON.stringify(last(rs))).toBe('run.completed');
      const toolMsgs = (h.calls[1]?.messages ?? []).filter((m) => m.role === 'tool');
      expect(toolMsgs.map((m) => [m.tool_call_id, m.content])).toEqual([
        ['a', 'first'],
        ['b', 'second'],
      ]);
      expect(rs.filter((r) => r.type === 'tool.call.completed').map((r) => r.data?.tool_call_id)).toEqual(['a', 'b']);
      expect(peak).toBe(mode === 'parallel' ? 2 : 1);
    });
  }

  it('stops without another model call when every tool of the batch returns terminate: true', async () => {
    const h = fakeHost({
      steps: [{ tool_calls: [{ id: 't1', name: 'exec', arguments: {} }] }, { content: 'never asked' }],
      tools: { exec: () => ({ terminate: true, ok: true }) },
    });
    const rs = await runInProcess(plugin, 'default', context({}), { api: h.handlers });
    expect(h.calls).toHaveLength(1);
    expect(last(rs)).toMatchObject({ type: 'run.completed', data: { finish_reason: 'tool_terminate' } });
  });

  it('at max-tool-iterations, pending calls get a "not executed" result, a final message says so, and the run completes', async () => {
    const forever = { tool_calls: [{ id: 'loop', name: 'exec', arguments: { command: 'true' } }] };
    const h = fakeHost({ steps: [forever, forever, forever, forever], tools: { exec: () => 'again' } });
    const rs = await runInProcess(plugin, 'default', context({ 'max-tool-iterations': 2 }), { api: h.handlers });
    expect(h.calls).toHaveLength(3);
    expect(h.toolCalls).toHaveLength(2);
    const completedTools = rs.filter((r) => r.type === 'tool.call.completed');
    expect(completedTools.at(-1)?.data).toMatchObject({ error: expect.stringContaining('not executed') });
    const messages = rs.filter((r) => r.type === 'message.completed');
    expect(String((messages.at(-1)?.data?.message as { content?: string }).content)).toContain('limit of 2 tool-call rounds');
    expect(last(rs)).toMatchObject({ type: 'run.completed', data: { finish_reason: 'tool_limit' } });
  });

  it('after the first turn sends only the messages added since, continuing the host context; a forgotten context is sent whole', async () => {
    const forever = { tool_calls: [{ id: 'loop', name: 'exec', arguments: { command: 'true' } }] };
    const h = fakeHost({ steps: [forever, forever, forever], tools: { exec: () => 'again' } });
    await runInProcess(plugin, 'default', context({ 'max-tool-iterations': 2 }), { api: h.handlers });
    const whole = h.calls.map((c) => c.messages.length);
    // Each later call sent the assistant's tool call and its result: two messages, on top of the last context.
    expect(h.sent).toEqual([
      { context_id: null, messages: whole[0] },
      { context_id: 'ctx-0', messages: 2 },
      { context_id: 'ctx-1', messages: 2 },
    ]);
    // What the model saw is the whole conversation, each turn extending the one before.
    for (let i = 1; i < h.calls.length; i++) expect(h.calls[i]?.messages.slice(0, whole[i - 1])).toEqual(h.calls[i - 1]?.messages);

    const lost = fakeHost({ steps: [forever, { content: 'done' }], tools: { exec: () => 'again' }, forgetContexts: true });
    const rs = await runInProcess(plugin, 'default', context({}), { api: lost.handlers });
    expect(last(rs)).toMatchObject({ type: 'run.completed' });
    expect(lost.sent.map((x) => x.context_id)).toEqual([null, 'ctx-0', null]);
    expect(lost.calls.at(-1)?.messages).toHaveLength((lost.calls[0]?.messages.length ?? 0) + 2);
  });

  it('cancel mid-stream stops the stream and ends without a terminal result', async () => {
    const h = fakeHost({ steps: [{ content: 'streaming forever', hang: true }] });
    const controller = new AbortController();
    const seen: string[] = [];
    const api: ApiHandlers = {
      ...h.handlers,
      'models.stream': (p, t) => {
        const r = h.handlers['models.stream']?.(p, {
          chunk: (c) => {
            seen.push(String(c.content));
            t.chunk(c);
            setTimeout(() => controller.abort(), 10);
          },
        });
        return r;
      },
    };
    const rs = await runInProcess(plugin, 'default', context({}), { api, signal: controller.signal });
    expect(seen).toEqual(['st']);
    expect(types(rs)).toEqual(['message.delta']);
  });

  it('never offers an ungranted tool, and answers a call to one without reaching the host', async () => {
    const h = fakeHost({
      steps: [{ tool_calls: [{ id: 'x', name: 'secret', arguments: {} }] }, { content: 'ok' }],
      tools: { secret: () => 'leaked', exec: () => 'fine' },
    });
    const rs = await runInProcess(plugin, 'default', context({}), { api: h.handlers });
    expect(h.details).toEqual(['exec']);
    expect(h.calls[0]?.tools).toEqual(['exec']);
    expect(h.toolCalls).toEqual([]);
    expect((h.calls[1]?.messages ?? []).at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'x', content: expect.stringContaining('not available') });
    expect(last(rs)?.type).toBe('run.completed');
  });

  it('a refused tool call is fed back as an error and the run goes on', async () => {
    const h = fakeHost({
      steps: [
        {
          tool_calls: [
            { id: 'r', name: 'exec', arguments: '{not json' },
            { id: 's', name: 'exec', arguments: {} },
          ],
        },
        { content: 'recovered' },
      ],
    });
    const rs = await runInProcess(plugin, 'default', context({}), { api: h.handlers });
    const toolMsgs = (h.calls[1]?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(toolMsgs[0]).toMatch(/^err: the arguments are not valid JSON/);
    expect(toolMsgs[1]).toMatch(/^err: tool exec is not granted/);
    expect(last(rs)?.type).toBe('run.completed');
  });

  it('previews a result over max-tool-result-chars, keeping the paths and URLs it named', async () => {
    const big = `${'x'.repeat(5000)} wrote /workspace/out/report.csv see https://example.com/r/1 ${'y'.repeat(5000)}`;
    const h = fakeHost({ steps: [{ tool_calls: [exec42] }, { content: 'ok' }], tools: { exec: () => big } });
    await runInProcess(plugin, 'default', context({ 'max-tool-result-chars': 1000 }), { api: h.handlers });
    const content = String((h.calls[1]?.messages ?? []).at(-1)?.content);
    expect(content.length).toBeLessThanOrEqual(1000);
    expect(content).toContain('characters not shown');
    expect(content).toContain('/workspace/out/report.csv');
    expect(content).toContain('https://example.com/r/1');
  });

  it('fails closed when the host cannot count tokens', async () => {
    const h = fakeHost({ steps: [{ content: 'never' }], countFails: true });
    const rs = await runInProcess(plugin, 'default', context({}), { api: h.handlers });
    expect(h.calls).toHaveLength(0);
    expect(last(rs)).toMatchObject({ type: 'run.failed', data: { code: 'runner.error' } });
    expect(String(last(rs)?.data?.error)).toContain('cannot count tokens');
  });

  it('a model refused in config but not granted is skipped; no model at all fails with runner.error', async () => {
    const h = fakeHost({ steps: [{ content: 'x' }] });
    const rs = await runInProcess(plugin, 'default', context({ model: { primary: 'ghost', fallbacks: [] } }), { api: h.handlers });
    expect(last(rs)).toMatchObject({ type: 'run.failed', data: { code: 'runner.error' } });
    const bad = await runInProcess(plugin, 'default', context({ 'tool-execution-mode': 'sideways' }), { api: h.handlers });
    expect(last(bad)).toMatchObject({ type: 'run.failed', data: { code: 'runner.error', error: expect.stringContaining('tool-execution-mode') } });
  });

  it('ends with runner.timeout (retryable) when the run outlives its timeout', async () => {
    const h = fakeHost({ steps: [{ content: 'slow', hang: true }] });
    const rs = await runInProcess(plugin, 'default', context({ timeout: 1 }), { api: h.handlers });
    expect(last(rs)).toMatchObject({ type: 'run.failed', data: { code: 'runner.timeout', retryable: true } });
  });
});

describe('local agent context', () => {
  const long = (n: number, word: string) => Array.from({ length: n }, () => word).join(' ');
  const history = [
    { seq: 1, role: 'user', content: `first question about run_7f3a9c21 ${long(600, 'old')}` },
    { seq: 2, role: 'assistant', content: long(600, 'older') },
    { seq: 3, role: 'user', content: long(20, 'recent') },
    { seq: 4, role: 'assistant', content: long(20, 'latest') },
    { seq: 5, role: 'user', content: 'what is 6*7?', event_id: 'ev-test' },
  ];
  const small = { 'context-window-tokens': 1_000, 'context-reserve-tokens': 100, 'context-keep-recent-tokens': 100, 'context-summary-tokens': 100 };
  const withHistory = (state: Record<string, unknown> = {}): ContextOverrides => ({
    context: { available_apis: { history_page: true, state: true } },
    state: { conversation: state },
  });

  it('asks for the token probe, tools, checkpoint and history together; a failed count is the error reported', async () => {
    const h = fakeHost({ steps: [{ content: '42' }], history: history.slice(2) });
    const entered: string[] = [];
    const seenByProbe: string[][] = [];
    const handlers: ApiHandlers = {
      ...h.handlers,
      'models.count_tokens': async (p, t) => {
        entered.push('models.count_tokens');
        // One turn of the event loop: reads sent with this one have reached their handlers by now.
        await new Promise((resolve) => setImmediate(resolve));
        if (p.text === '') seenByProbe.push([...entered]);
        return await h.handlers['models.count_tokens']!(p, t);
      },
    };
    const noting =
      <P, T, R>(method: string, inner: (p: P, t: T) => R) =>
      (p: P, t: T): R => {
        entered.push(method);
        return inner(p, t);
      };
    handlers['tools.get_detail'] = noting('tools.get_detail', h.handlers['tools.get_detail']!);
    handlers['state.get'] = noting('state.get', h.handlers['state.get']!);
    handlers['history.page'] = noting('history.page', h.handlers['history.page']!);
    await runInProcess(plugin, 'default', context({}, withHistory()), { api: handlers });
    expect(seenByProbe[0]?.sort()).toEqual(['history.page', 'models.count_tokens', 'state.get', 'tools.get_detail']);
    expect(h.calls).toHaveLength(1);

    const failing = fakeHost({ steps: [{ content: 'never' }], countFails: true });
    const rs = await runInProcess(plugin, 'default', context({}, withHistory()), {
      api: {
        ...failing.handlers,
        'history.page': () => {
          throw new ApiCallError('history.page', { code: 'internal', message: 'history store down', retryable: false, details: {} });
        },
      },
    });
    expect(last(rs)).toMatchObject({ type: 'run.failed', data: { code: 'runner.error' } });
    expect(String(last(rs)?.data?.error)).toContain('cannot count tokens');
  });

  it('pulls history through the API, without the current event', async () => {
    const h = fakeHost({ steps: [{ content: '42' }], history: history.slice(2) });
    await runInProcess(plugin, 'default', context({}, withHistory()), { api: h.handlers });
    const msgs = h.calls[0]?.messages ?? [];
    expect(msgs.filter((m) => m.role !== 'system').map((m) => [m.role, String(m.content).split(' ')[0]])).toEqual([
      ['user', 'recent'],
      ['assistant', 'latest'],
      ['user', 'what'],
    ]);
  });

  it('compacts older turns into a checkpoint that the next run reuses instead of the compacted history', async () => {
    const state = new Map<string, unknown>();
    const h = fakeHost({ steps: [{ content: '42' }, { content: '42 again' }], history, state });
    const r1 = await runInProcess(plugin, 'default', context(small, withHistory()), { api: h.handlers });
    expect(h.invokes, JSON.stringify(r1.at(-1))).toHaveLength(1);
    const cp = state.get('local_agent.checkpoint') as { through_seq: number; summary: { goal: string }; ids: string[] };
    expect(cp).toMatchObject({ version: 1, through_seq: 2, summary: { goal: 'answer questions' } });
    expect(cp.ids).toContain('run_7f3a9c21');
    const first = JSON.stringify(h.calls[0]?.messages);
    expect(first).toContain('Summary of the earlier conversation');
    expect(first).not.toContain('older older');
    expect(first).toContain('recent recent');

    // The next run: the checkpoint comes with the run's state; the compacted items are not sent again and nothing is summarized.
    await runInProcess(plugin, 'default', context(small, withHistory({ 'local_agent.checkpoint': cp })), { api: h.handlers });
    expect(h.invokes).toHaveLength(1);
    const second = JSON.stringify(h.calls[1]?.messages);
    expect(second).toContain('answer questions');
    expect(second).toContain('run_7f3a9c21');
    expect(second).not.toContain('old old');
    expect(second).toContain('latest latest');
  });

  it('on a context-overflow refusal before any output, compacts harder and retries once', async () => {
    const overflow = upstream("This model's maximum context length is 1000 tokens", { status: 400 });
    const state = new Map<string, unknown>();
    const h = fakeHost({
      steps: { gpt: [{ fail: overflow }, { content: 'fits now' }], backup: [{ content: 'not used' }] },
      history: history.slice(0, 4),
      state,
    });
    const roomy = { ...small, 'context-window-tokens': 5_000 };
    const rs = await runInProcess(plugin, 'default', context(roomy, withHistory()), { api: h.handlers });
    expect(h.calls.map((c) => c.model_id)).toEqual(['gpt', 'gpt']);
    expect(h.invokes).toHaveLength(1);
    expect(last(rs)).toMatchObject({ type: 'run.completed' });
    const overflowTwice = fakeHost({ steps: { gpt: [{ fail: overflow }, { fail: overflow }] }, history: history.slice(0, 4), state: new Map() });
    const failedRun = await runInProcess(plugin, 'default', context(roomy, withHistory()), { api: overflowTwice.handlers });
    expect(last(failedRun)).toMatchObject({ type: 'run.failed', data: { code: 'runner.llm_error' } });
  });

  it('announces bound skills in the <available_skills> format, read from the activate tool', async () => {
    const h = fakeHost({ steps: [{ content: 'ok' }] });
    const detail = h.handlers['tools.get_detail'];
    h.handlers['tools.get_detail'] = (p, t) =>
      p.tool_name === 'activate'
        ? {
            tool: {
              name: 'activate',
              description:
                'Activate a skill.\n<available_skills>\n<skill><name>pdf-tools</name><description>Fill &amp; merge PDFs</description></skill>\n</available_skills>',
              parameters: {},
            },
          }
        : detail?.(p, t);
    const r1 = await runInProcess(plugin, 'default', context({}, { resources: { tools: [tool('exec'), tool('activate')] } }), { api: h.handlers });
    expect(r1.at(-1)?.type, JSON.stringify(r1.at(-1))).toBe('run.completed');
    const system = JSON.stringify(h.calls[0]?.messages);
    expect(system).toContain('<available_skills>');
    expect(system).toContain('<name>pdf-tools</name>');
    expect(system).toContain('<description>Fill &amp; merge PDFs</description>');
    expect(system).toContain('<location>/workspace/.skills/pdf-tools/SKILL.md</location>');
    expect(h.calls[0]?.tools).toEqual(['exec', 'activate']);
  });

  it('wraps knowledge-base entries around the question, within a quarter of the input budget', async () => {
    const h = fakeHost({ steps: [{ content: 'ok' }], window: 1_000 });
    const entry = (id: string, text: string, score: number) => ({
      kb_id: 'kb1',
      document_id: id,
      chunk_id: `${id}#0`,
      score,
      text,
      content: text,
      metadata: {},
    });
    h.handlers['knowledge.retrieve'] = () => ({ results: [entry('d1', 'The answer to everything is 42.', 0.9), entry('d2', long(400, 'filler'), 0.5)] });
    const r1 = await runInProcess(
      plugin,
      'default',
      context(
        { 'context-window-tokens': 1_000, 'context-reserve-tokens': 100 },
        { resources: { knowledge_bases: [{ kb_id: 'kb1', kb_name: null, kb_type: null }] } },
      ),
      { api: h.handlers },
    );
    expect(r1.at(-1)?.type, JSON.stringify(r1.at(-1))).toBe('run.completed');
    const user = String((h.calls[0]?.messages ?? []).at(-1)?.content);
    expect(user).toContain('<context>\n[1] The answer to everything is 42.');
    expect(user).not.toContain('filler');
    expect(user).toContain('<user_message>\nwhat is 6*7?\n</user_message>');
  });

  it('keeps every knowledge-base entry without counting tokens when their bytes fit the budget', async () => {
    const h = fakeHost({ steps: [{ content: 'ok' }] });
    const counted: Array<string | undefined> = [];
    const count = h.handlers['models.count_tokens']!;
    h.handlers['models.count_tokens'] = (p, t) => {
      counted.push(p.text);
      return count(p, t);
    };
    const entry = (id: string, text: string) => ({ kb_id: 'kb1', document_id: id, chunk_id: `${id}#0`, score: 0.5, text, content: text, metadata: {} });
    h.handlers['knowledge.retrieve'] = () => ({ results: [entry('d1', 'The answer to everything is 42.'), entry('d2', 'Ask again tomorrow.')] });
    const rs = await runInProcess(plugin, 'default', context({}, { resources: { knowledge_bases: [{ kb_id: 'kb1', kb_name: null, kb_type: null }] } }), {
      api: h.handlers,
    });
    expect(rs.at(-1)?.type, JSON.stringify(rs.at(-1))).toBe('run.completed');
    const user = String((h.calls[0]?.messages ?? []).at(-1)?.content);
    expect(user).toContain('[1] The answer to everything is 42.');
    expect(user).toContain('[2] Ask again tomorrow.');
    // Only the probe for the context window: neither the entries nor the context were counted.
    expect(counted).toEqual(['']);
  });
});
