// The agent loop: context in, model turns streamed to the user, the model's tool calls run over the
// granted tools, until the model answers, a tool terminates the run, or the round limit is reached.
import {
  ApiCallError,
  completed,
  delta,
  failed,
  message,
  toolCompleted,
  toolStarted,
  type Message,
  type RunnerApi,
  type RunnerContext,
  type RunnerResult,
  type ToolCall,
} from 'lbot/sdk';
import { parseConfig, type LocalAgentConfig } from './config.js';
import { fetchHistory, fitContext, historyAfter, readCheckpoint, type BuiltContext, type ContextParts } from './context.js';
import { isContextOverflow, turnWithFallback, TurnError, UsageTotal, type TurnRequest } from './model-call.js';
import { EXEC_GUIDANCE, retrieveKnowledge, skillsMessage, skillsOf, withKnowledge } from './prompt.js';
import { CountUnavailableError, createCounter } from './tokens.js';
import { loadTools, runBatch, ToolRunError } from './tools.js';

type Warn = (line: string) => void;

class SetupError extends Error {
  override name = 'SetupError';
}

/** The models to try, in order: the configured ones the run was granted, else every granted LLM. */
function candidates(ctx: RunnerContext, cfg: LocalAgentConfig, warn: Warn): string[] {
  const llms = ctx.resources.models.filter((m) => m.model_type !== 'rerank' && m.model_type !== 'embedding').map((m) => m.model_id);
  if (cfg.model.length === 0) return llms;
  const granted = new Set(llms);
  const usable = cfg.model.filter((id) => granted.has(id) || (warn(`model ${id} is configured but not granted to this run; skipped`), false));
  return usable;
}

function userText(ctx: RunnerContext): string {
  if (ctx.input.text) return ctx.input.text;
  const parts = ctx.input.contents.map((c) => (typeof c.text === 'string' ? c.text : '')).filter(Boolean);
  return parts.length > 0 ? parts.join('\n') : `(event ${ctx.event.event_type})`;
}

/** How a failure ends the run: its code, and whether a retry may help. */
function failure(err: unknown, timedOut: boolean, cfg: LocalAgentConfig): RunnerResult {
  if (timedOut) return failed(`the run took longer than its timeout of ${cfg.timeout} s`, 'runner.timeout', true);
  const deadline = (e: unknown) => e instanceof ApiCallError && e.code === 'deadline_exceeded';
  if (err instanceof TurnError) {
    if (deadline(err.error)) return failed(`model ${err.model_id}: ${err.message}`, 'runner.timeout', true);
    const retryable = err.error instanceof ApiCallError ? err.error.retryable : false;
    return failed(`model ${err.model_id}: ${err.message}`, 'runner.llm_error', retryable);
  }
  if (err instanceof ToolRunError) return err.deadline ? failed(err.message, 'runner.timeout', true) : failed(err.message, 'runner.tool_error', false);
  if (deadline(err)) return failed(err instanceof Error ? err.message : String(err), 'runner.timeout', true);
  if (err instanceof CountUnavailableError || err instanceof SetupError) return failed(err.message, 'runner.error', false);
  return failed(err instanceof Error ? err.message : String(err), 'runner.error', false);
}

export async function* runAgent(ctx: RunnerContext, api: RunnerApi): AsyncGenerator<RunnerResult> {
  const warn: Warn = (line) => process.stderr.write(`local-agent: ${line}\n`);
  const parsed = parseConfig(ctx.config);
  if (!parsed.ok) {
    yield failed(`invalid local-agent config: ${parsed.reason}`, 'runner.error', false);
    return;
  }
  const cfg = parsed.config;
  const timeout = AbortSignal.timeout(cfg.timeout * 1000);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  const usage = new UsageTotal();
  try {
    yield* loop(ctx, api, cfg, { signal, usage, warn });
  } catch (err) {
    // Cancelled: the host records the status; nothing more is sent.
    if (ctx.signal.aborted) return;
    yield failure(err, timeout.aborted, cfg);
  }
}

type LoopDeps = { signal: AbortSignal; usage: UsageTotal; warn: Warn };

async function* loop(ctx: RunnerContext, api: RunnerApi, cfg: LocalAgentConfig, d: LoopDeps): AsyncGenerator<RunnerResult> {
  const models = candidates(ctx, cfg, d.warn);
  const first = models[0];
  if (first === undefined) throw new SetupError('No LLM model configured for the local-agent runner: set `model` in the binding config and grant it');
  const counter = createCounter(api, first, d.signal);
  // These reads do not depend on each other: the runner sends them in one write and the host answers them
  // together, so the first model call starts a few round trips sooner. A failure is raised in this order.
  const [probed, tooled, checkpointed, fetched] = await Promise.allSettled([
    counter.probe(),
    loadTools(ctx, api, d.signal, d.warn),
    readCheckpoint(ctx, api, d.signal),
    fetchHistory(ctx, api, cfg, d.signal),
  ]);
  settled(probed);
  const window = Math.min(cfg['context-window-tokens'], counter.contextWindow ?? Number.POSITIVE_INFINITY);
  const budget = Math.max(1, window - cfg['context-reserve-tokens']);

  const granted = settled(tooled);
  const tools = [...granted.values()];
  const skills = skillsMessage(skillsOf(granted.get('activate')));
  const head: Message[] = [
    ...cfg.prompt.map((p) => ({ role: p.role, content: p.content })),
    ...(skills ? [skills] : []),
    ...(granted.has('exec') ? [EXEC_GUIDANCE] : []),
  ];
  const checkpoint = settled(checkpointed);
  const history = historyAfter(ctx, settled(fetched), checkpoint);
  const text = userText(ctx);
  const knowledge = await retrieveKnowledge(ctx, api, cfg, text, { counter, budget: Math.floor(budget / 4), signal: d.signal, warn: d.warn });
  const parts: ContextParts = { head, history, user: { role: 'user', content: withKnowledge(text, knowledge) }, tools, checkpoint };
  const fit = (harder: boolean): Promise<BuiltContext> =>
    fitContext(ctx, api, cfg, parts, { counter, budget, model_id: first, usage: d.usage, harder, signal: d.signal, warn: d.warn });
  let built = await fit(false);
  const messages: Message[] = [...built.messages];
  const prefix = messages.length;

  let committed: string[] = models;
  let retriedOverflow = false;
  let round = 0;
  // The host's copy of the messages sent so far: each turn sends only what the loop appended since.
  let context: TurnRequest['context'] = null;
  for (;;) {
    const req: TurnRequest = { messages, tools, remove_think: cfg['remove-think'], context };
    let reply: { message: Message; model_id: string; context_id: string | null } | null = null;
    let streamedText = '';
    try {
      for await (const event of turnWithFallback(api, committed, req, { stream: true, signal: d.signal, warn: d.warn })) {
        if (event.kind === 'text') {
          streamedText = event.text;
          yield delta(event.text);
        } else {
          d.usage.add(event.reply.usage);
          reply = { message: event.reply.message, model_id: event.model_id, context_id: event.reply.context_id ?? null };
        }
      }
    } catch (err) {
      if (err instanceof TurnError && !err.afterOutput && isContextOverflow(err.error) && !retriedOverflow) {
        // The model refused the request as too long before sending anything: compact harder, once.
        retriedOverflow = true;
        d.warn(`model ${err.model_id} refused the request as too long; compacting the history harder and retrying once`);
        const inRun = messages.slice(prefix);
        built = await fit(true);
        messages.splice(0, messages.length, ...built.messages, ...inRun);
        context = null;
        continue;
      }
      throw err;
    }
    if (!reply) throw new TurnError(new Error('the model call ended without a reply'), committed[0] ?? '', streamedText !== '');
    // The first model that answered serves the rest of the run.
    committed = [reply.model_id];
    context = reply.context_id ? { id: reply.context_id, sent: messages.length } : null;
    const answer = reply.message;
    const calls: ToolCall[] = answer.tool_calls ?? [];
    const content = typeof answer.content === 'string' ? answer.content : '';
    const assistant: Message = {
      role: 'assistant',
      content: content === '' && calls.length > 0 ? null : content,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    };
    messages.push(assistant);
    if (calls.length === 0) {
      yield message(content);
      yield finished('stop', d.usage);
      return;
    }
    if (content !== '') yield message(content, { tool_calls: calls });

    round += 1;
    if (round > cfg['max-tool-iterations']) {
      const limit = cfg['max-tool-iterations'];
      d.warn(`run ${ctx.run_id}: the tool-call round limit (${limit}) was reached; ${calls.length} pending call(s) not executed`);
      for (const c of calls) {
        const note = `not executed: the tool-call round limit (${limit}) was reached`;
        messages.push({ role: 'tool', tool_call_id: c.id, content: note });
        yield toolCompleted(c.function.name, { error: note }, c.id);
      }
      const final = `I stopped here: the limit of ${limit} tool-call rounds for one request was reached before the task was finished.`;
      messages.push({ role: 'assistant', content: final });
      yield message(final);
      yield finished('tool_limit', d.usage);
      return;
    }

    for (const c of calls) yield toolStarted(c.function.name, argumentsObject(c.function.arguments), c.id);
    const outcomes = await runBatch(api, granted, calls, { mode: cfg['tool-execution-mode'], cap: cfg['max-tool-result-chars'], signal: d.signal });
    for (const o of outcomes) {
      messages.push(o.message);
      yield toolCompleted(o.call.function.name, { result: o.result, error: o.error }, o.call.id);
    }
    if (outcomes.every((o) => o.terminate)) {
      yield finished('tool_terminate', d.usage);
      return;
    }
  }
}

/** The value of a settled call, or its failure thrown. */
function settled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

/** `run.completed` with the usage of every model call of the run added up. */
function finished(finish_reason: string, usage: UsageTotal): RunnerResult {
  const result = completed({ finish_reason });
  return { ...result, data: { ...result.data, usage: usage.toJSON() } };
}

function argumentsObject(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw || '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value))
      : { arguments: raw.slice(0, 2_000) };
  } catch {
    return { arguments: raw.slice(0, 2_000) };
  }
}
