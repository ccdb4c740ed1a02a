// The granted tools as the model sees them, and running one batch of the model's tool calls: in
// parallel or one by one, results in the model's order, long results previewed.
import { ApiCallError, type Message, type RunContext, type RunnerApi, type ToolCall, z } from 'lbot/sdk';
import type { LlmTool } from './model-call.js';

/** At most this many tools are offered to a model (OpenAI's limit). */
const MAX_TOOLS = 128;
const MAX_DESCRIPTION = 8_000;

/** The run's granted tools, described by the host (`tools.get_detail`); nothing else is ever offered. */
export async function loadTools(ctx: RunContext, api: RunnerApi, signal: AbortSignal, warn: (line: string) => void): Promise<Map<string, LlmTool>> {
  const names = [...new Set(ctx.resources.tools.map((t) => t.tool_name))].slice(0, MAX_TOOLS);
  const details = await Promise.all(
    names.map(async (name) => {
      try {
        const d = await api.tools.getDetail(name, { signal });
        return { name, description: d.description.slice(0, MAX_DESCRIPTION), parameters: d.parameters };
      } catch (err) {
        if (signal.aborted) throw err;
        warn(`tool ${name} is granted but its description could not be read (${err instanceof Error ? err.message : String(err)}); it is not offered`);
        return null;
      }
    }),
  );
  const tools = new Map<string, LlmTool>();
  for (const d of details) if (d) tools.set(d.name, d);
  return tools;
}

const URL_OR_PATH = /https?:\/\/[^\s"'<>\\)]+|\/workspace(?:\/[\w.@%+=:,~-]+)+/g;
const MAX_KEPT_REFS = 20;

/**
 * Cuts a result longer than `cap` to its head and tail around a notice, and lists the paths and URLs of
 * the full text so the model can still reach what the tool produced.
 */
export function previewResult(text: string, cap: number): string {
  if (text.length <= cap) return text;
  const refs = [...new Set(text.match(URL_OR_PATH) ?? [])].slice(0, MAX_KEPT_REFS).map((r) => r.slice(0, 500));
  const refsText = refs.length > 0 ? `\n[paths and URLs in the full result: ${refs.join(' ')}]` : '';
  const room = Math.max(200, cap - refsText.length - 120);
  const head = Math.floor(room * 0.6);
  const tail = room - head;
  const notice = `\n... [${text.length - head - tail} of ${text.length} characters not shown] ...\n`;
  return `${text.slice(0, head)}${notice}${text.slice(text.length - tail)}${refsText}`;
}

/** The text of a tool result as the model gets it: strings as they are, anything else as JSON. */
function resultText(result: unknown): string {
  if (typeof result === 'string') return result;
  const json = JSON.stringify(result);
  return json === undefined ? 'null' : json;
}

const TerminateSchema = z.looseObject({ terminate: z.literal(true) });

export type ToolOutcome = {
  call: ToolCall;
  /** What the model sees. */
  message: Message;
  /** The tool's own result (for `tool.call.completed`), or null on error. */
  result: unknown;
  error: string | null;
  terminate: boolean;
};

/** A failure that is not a tool's answer: the host channel broke, or the run's deadline passed. */
export class ToolRunError extends Error {
  override name = 'ToolRunError';
  constructor(
    message: string,
    readonly deadline: boolean,
  ) {
    super(message);
  }
}

const ArgumentsSchema = z.record(z.string(), z.unknown());

function parseArguments(raw: string): Record<string, unknown> | string {
  if (raw.trim() === '') return {};
  try {
    const value = ArgumentsSchema.safeParse(JSON.parse(raw));
    return value.success ? value.data : 'the arguments must be a JSON object';
  } catch (err) {
    return `the arguments are not valid JSON (${err instanceof Error ? err.message : String(err)})`;
  }
}

async function runOne(api: RunnerApi, granted: ReadonlyMap<string, LlmTool>, call: ToolCall, cap: number, signal: AbortSignal): Promise<ToolOutcome> {
  const name = call.function.name;
  const fail = (error: string): ToolOutcome => ({
    call,
    message: { role: 'tool', tool_call_id: call.id, content: `err: ${error}` },
    result: null,
    error,
    terminate: false,
  });
  // A name the run was not given is answered here: the host never sees the call.
  if (!granted.has(name)) return fail(`tool ${JSON.stringify(name.slice(0, 80))} is not available in this run`);
  const params = parseArguments(call.function.arguments);
  if (typeof params === 'string') return fail(params);
  try {
    const answer = await api.tools.call(name, params, { signal });
    const result = answer.result;
    return {
      call,
      message: { role: 'tool', tool_call_id: call.id, content: previewResult(resultText(result), cap) },
      result,
      error: null,
      terminate: TerminateSchema.safeParse(result).success,
    };
  } catch (err) {
    if (signal.aborted) throw err;
    if (err instanceof ApiCallError) {
      if (err.code === 'deadline_exceeded') throw new ToolRunError(`tool ${name}: ${err.message}`, true);
      if (err.details.reason === 'aborted' || err.details.reason === 'rpc_error') throw new ToolRunError(`tool ${name}: ${err.message}`, false);
      return fail(err.error.message);
    }
    throw new ToolRunError(`tool ${name} failed: ${err instanceof Error ? err.message : String(err)}`, false);
  }
}

/** Runs a batch; the outcomes are in the model's order whatever order the calls finished in. */
export async function runBatch(
  api: RunnerApi,
  granted: ReadonlyMap<string, LlmTool>,
  calls: readonly ToolCall[],
  opts: { mode: 'parallel' | 'serial'; cap: number; signal: AbortSignal },
): Promise<ToolOutcome[]> {
  if (opts.mode === 'parallel') return Promise.all(calls.map((c) => runOne(api, granted, c, opts.cap, opts.signal)));
  const out: ToolOutcome[] = [];
  for (const c of calls) out.push(await runOne(api, granted, c, opts.cap, opts.signal));
  return out;
}
