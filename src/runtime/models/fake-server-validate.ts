// Request validation of the fake upstream, as strict as the real APIs: unknown parameters, tool spec
// shapes, roles, and tool-call ids that must be answered by tool results, with the real error wording.
import { z } from 'zod';

export type Refusal = { status: number; message: string; param?: string; code?: string };

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const JsonObject = z.record(z.string(), z.unknown());

function firstIssue(err: z.ZodError): Refusal {
  const issue = err.issues[0];
  const param = issue?.path.map(String).join('.') ?? '';
  if (issue?.code === 'unrecognized_keys') return { status: 400, message: `Unrecognized request argument supplied: ${issue.keys.join(', ')}`, param };
  if (issue?.code === 'invalid_type' && issue.input === undefined)
    return { status: 400, message: `Missing required parameter: '${param}'.`, param, code: 'missing_required_parameter' };
  return { status: 400, message: `Invalid value for '${param}': ${issue?.message ?? 'invalid'}`, param, code: 'invalid_value' };
}

// ---- OpenAI chat completions ----

const OaToolCall = z.strictObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.strictObject({ name: z.string().regex(TOOL_NAME), arguments: z.string() }),
});
const OaPart = z.union([
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({ type: z.literal('image_url'), image_url: z.strictObject({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }) }),
]);
const OaMessage = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('system'), content: z.string(), name: z.string().optional() }),
  z.strictObject({ role: z.literal('developer'), content: z.string(), name: z.string().optional() }),
  z.strictObject({ role: z.literal('user'), content: z.union([z.string(), z.array(OaPart).min(1)]), name: z.string().optional() }),
  z.strictObject({
    role: z.literal('assistant'),
    content: z.string().nullable().optional(),
    name: z.string().optional(),
    tool_calls: z.array(OaToolCall).min(1).optional(),
    refusal: z.string().nullable().optional(),
  }),
  z.strictObject({ role: z.literal('tool'), content: z.string(), tool_call_id: z.string().min(1) }),
]);
const OaTool = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().regex(TOOL_NAME, 'tool names match ^[a-zA-Z0-9_-]{1,64}$'),
    description: z.string().optional(),
    parameters: JsonObject.optional(),
    strict: z.boolean().optional(),
  }),
});
export const OaChatSchema = z.strictObject({
  model: z.string().min(1),
  messages: z.array(OaMessage).min(1),
  tools: z.array(OaTool).max(128).optional(),
  tool_choice: z.unknown().optional(),
  parallel_tool_calls: z.boolean().optional(),
  stream: z.boolean().optional(),
  stream_options: z.strictObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  max_tokens: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)])
    .nullable()
    .optional(),
  seed: z.number().int().optional(),
  response_format: z.looseObject({ type: z.enum(['text', 'json_object', 'json_schema']) }).optional(),
  presence_penalty: z.number().min(-2).max(2).optional(),
  frequency_penalty: z.number().min(-2).max(2).optional(),
  n: z.literal(1).optional(),
  user: z.string().optional(),
  reasoning_effort: z.string().optional(),
  logit_bias: JsonObject.optional(),
  logprobs: z.boolean().optional(),
  metadata: JsonObject.optional(),
  store: z.boolean().optional(),
});
export type OaChat = z.infer<typeof OaChatSchema>;

export function validateOpenAiChat(body: unknown): { ok: true; req: OaChat } | { ok: false; refusal: Refusal } {
  const parsed = OaChatSchema.safeParse(body);
  if (!parsed.success) return { ok: false, refusal: firstIssue(parsed.error) };
  const req = parsed.data;
  if (req.stream_options && !req.stream)
    return {
      ok: false,
      refusal: { status: 400, message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.", param: 'stream_options' },
    };
  let pending: string[] = [];
  for (const [i, m] of req.messages.entries()) {
    if (m.role === 'tool') {
      if (!pending.includes(m.tool_call_id)) {
        return {
          ok: false,
          refusal: {
            status: 400,
            message: `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`,
            param: `messages.[${i}].role`,
          },
        };
      }
      pending = pending.filter((id) => id !== m.tool_call_id);
      continue;
    }
    if (pending.length > 0) {
      return {
        ok: false,
        refusal: {
          status: 400,
          message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
          param: `messages.[${i}].role`,
        },
      };
    }
    if (m.role === 'assistant') pending = (m.tool_calls ?? []).map((c) => c.id);
  }
  if (pending.length > 0) {
    return {
      ok: false,
      refusal: {
        status: 400,
        message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
        param: 'messages',
      },
    };
  }
  return { ok: true, req };
}

export const OaEmbeddingsSchema = z.strictObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.string()).min(1).max(2048)]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().positive().optional(),
  user: z.string().optional(),
});

export const RerankRequestSchema = z.strictObject({
  model: z.string().min(1),
  query: z.string().min(1),
  documents: z.array(z.string()).min(1).max(1000),
  top_n: z.number().int().positive().optional(),
  return_documents: z.boolean().optional(),
});

export function validateWith<T>(schema: z.ZodType<T>, body: unknown): { ok: true; req: T } | { ok: false; refusal: Refusal } {
  const parsed = schema.safeParse(body);
  return parsed.success ? { ok: true, req: parsed.data } : { ok: false, refusal: firstIssue(parsed.error) };
}

// ---- Anthropic Messages ----

const AnText = z.strictObject({ type: z.literal('text'), text: z.string(), cache_control: JsonObject.optional() });
const AnImage = z.strictObject({
  type: z.literal('image'),
  source: z.union([
    z.strictObject({ type: z.literal('base64'), media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), data: z.string().min(1) }),
    z.strictObject({ type: z.literal('url'), url: z.string().min(1) }),
  ]),
});
const AnToolUse = z.strictObject({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().regex(TOOL_NAME), input: JsonObject });
const AnToolResult = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(AnText)]).optional(),
  is_error: z.boolean().optional(),
});
const AnBlock = z.discriminatedUnion('type', [AnText, AnImage, AnToolUse, AnToolResult]);
const AnMessage = z.strictObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(AnBlock).min(1)]) });
export const AnMessagesSchema = z.strictObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z.array(AnMessage).min(1),
  system: z.union([z.string(), z.array(AnText)]).optional(),
  tools: z
    .array(
      z.strictObject({ name: z.string().regex(TOOL_NAME), description: z.string().optional(), input_schema: z.looseObject({ type: z.literal('object') }) }),
    )
    .optional(),
  tool_choice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']) }).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().positive().optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: JsonObject.optional(),
});
export type AnMessages = z.infer<typeof AnMessagesSchema>;

function anthropicIssue(err: z.ZodError): Refusal {
  const issue = err.issues[0];
  const at = issue?.path.map(String).join('.') ?? '';
  if (issue?.code === 'unrecognized_keys') return { status: 400, message: `${issue.keys.join(', ')}: Extra inputs are not permitted` };
  if (issue?.code === 'invalid_type' && issue.input === undefined) return { status: 400, message: `${at}: Field required` };
  return { status: 400, message: `${at}: ${issue?.message ?? 'invalid'}` };
}

export function validateAnthropic(body: unknown): { ok: true; req: AnMessages } | { ok: false; refusal: Refusal } {
  const parsed = AnMessagesSchema.safeParse(body);
  if (!parsed.success) return { ok: false, refusal: anthropicIssue(parsed.error) };
  const req = parsed.data;
  if (req.messages[0]?.role !== 'user') return { ok: false, refusal: { status: 400, message: 'messages: first message must use the "user" role' } };
  let pending: string[] = [];
  for (const [i, m] of req.messages.entries()) {
    const blocks = typeof m.content === 'string' ? [] : m.content;
    if (m.role === 'user') {
      for (const b of blocks) {
        if (b.type !== 'tool_result') continue;
        if (!pending.includes(b.tool_use_id)) {
          return {
            ok: false,
            refusal: {
              status: 400,
              message: `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
            },
          };
        }
      }
      const answered = new Set(blocks.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])));
      const missing = pending.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return {
          ok: false,
          refusal: {
            status: 400,
            message: `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}`,
          },
        };
      }
      pending = [];
    } else {
      if (pending.length > 0)
        return {
          ok: false,
          refusal: {
            status: 400,
            message: `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${pending.join(', ')}`,
          },
        };
      pending = blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    }
  }
  return { ok: true, req };
}
