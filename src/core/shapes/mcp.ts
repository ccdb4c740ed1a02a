// Shapes of `lbot mcp …` and `lbot model …`: configured servers and models, their tests, tool listings.
import { z } from 'zod';
import { JsonObjectSchema } from '../protocol/event.js';
import { defineShape } from './shape.js';

export const McpServer = defineShape(
  'McpServer',
  'item',
  'a configured MCP server with the live state of a running lbot serve / lbot run (`mcp list`, `mcp enable|disable`)',
  z.strictObject({
    name: z.string(),
    uuid: z.string().nullable(),
    mode: z.string(),
    enabled: z.boolean(),
    in_box: z.boolean(),
    target: z.string(),
    status: z.string(),
    error_phase: z.string().nullable(),
    error_message: z.string().nullable(),
    retry_count: z.number().int(),
    tool_count: z.number().int(),
    pid: z.number().int().nullable(),
    host_pid: z.number().int().nullable(),
  }),
);

const McpServerRecordSchema = z.record(z.string(), z.unknown()).describe('the stored server record, secrets masked');

export const McpServerConfig = defineShape('McpServerConfig', 'item', 'the stored record of an MCP server, secrets masked (`mcp add`)', McpServerRecordSchema);

export const McpServerDetail = defineShape(
  'McpServerDetail',
  'item',
  'one MCP server: its record (secrets masked), live runtime info, and its summary (`mcp show`)',
  z.strictObject({ server: McpServerRecordSchema, runtime_info: z.record(z.string(), z.unknown()).nullable(), status: McpServer.schema }),
);

const McpTestSchema = z.strictObject({
  name: z.string(),
  mode: z.string(),
  status: z.string(),
  ok: z.boolean(),
  tools: z.array(z.string()),
  error_phase: z.string().nullable(),
  error_message: z.string().nullable(),
  error_code: z.string().nullable(),
  hint: z.string().nullable(),
  retry_count: z.number().int(),
  server_info: z.looseObject({ name: z.string(), version: z.string() }).nullable(),
  timings: z.strictObject({ connect_ms: z.number().nullable(), list_tools_ms: z.number().nullable(), total_ms: z.number() }),
  box_session_id: z.string().optional().describe('the box session of a box-hosted server'),
});
export const McpTest = defineShape(
  'McpTest',
  'item',
  'a successful `mcp test`: tools and timings (a failure is the ErrorEnvelope, with this object as `error.details.test`)',
  McpTestSchema,
);

export const McpLogin = defineShape(
  'McpLogin',
  'item',
  'an OAuth login and the test that followed it (`mcp login`; a failed test is the ErrorEnvelope)',
  z.strictObject({ login: z.looseObject({ name: z.string() }), test: McpTestSchema }),
);

export const McpLogout = defineShape(
  'McpLogout',
  'item',
  'whether stored OAuth tokens were removed (`mcp logout`)',
  z.strictObject({ name: z.string(), removed: z.boolean() }),
);

export const McpTool = defineShape(
  'McpTool',
  'item',
  'a tool of an enabled MCP server under the name runs see (`mcp tools`)',
  z.looseObject({ name: z.string(), server: z.string(), tool: z.string(), description: z.string(), parameters: JsonObjectSchema }),
);

export const McpCall = defineShape(
  'McpCall',
  'item',
  'the answer of one tool call (`mcp call`)',
  z.strictObject({ server: z.string(), tool: z.string(), result: z.unknown() }),
);

const ModelSummarySchema = z.strictObject({
  id: z.string(),
  provider: z.string(),
  model_type: z.string(),
  model: z.string().nullable(),
  base_url: z.string().nullable(),
  key: z.string().describe('where the key comes from, never the key: `env:VAR`, `stored` or `none`'),
  function_calling: z.boolean(),
  tokenizer: z.string().nullable(),
  context_window: z.number().int().nullable(),
});
export const Model = defineShape('Model', 'item', 'a configured model, keys never shown (`model list`, `model add`)', ModelSummarySchema);

export const ModelDetail = defineShape(
  'ModelDetail',
  'item',
  'one model: its config (secrets masked) and summary (`model show`)',
  z.strictObject({ model: z.unknown(), summary: ModelSummarySchema }),
);

const ProbeSchema = z.strictObject({ ok: z.boolean(), latency_ms: z.number(), error: z.string().nullable() });
export const ModelTest = defineShape(
  'ModelTest',
  'item',
  'a tiny end-to-end test of one model (`model test`; exit 6 when it failed)',
  z.strictObject({
    name: z.string(),
    ok: z.boolean(),
    upstream_model: z.string().nullable(),
    latency_ms: z.number().nullable(),
    usage: z.looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() }).nullable(),
    reply: z.string().nullable(),
    error: z.string().nullable(),
    streaming: ProbeSchema,
    tool_calls: ProbeSchema.extend({ supported: z.boolean() }),
  }),
);

export const FakeModelServer = defineShape(
  'FakeModelServer',
  'item',
  'where `model fake-server` listens',
  z.strictObject({ url: z.string(), openai_base_url: z.string(), anthropic_base_url: z.string(), port: z.number().int() }),
);
