// JSON-RPC 2.0 framing of the plugin protocol (architecture.md §4): message shapes and the
// host ↔ plugin methods other than the proxy API.
import { z } from 'zod';
import { JsonObjectSchema } from './event.js';
import { RunContextSchema } from './context.js';
import { RunResultSchema } from './results.js';
import { AgentApiErrorSchema } from './proxy.js';

export const PROTOCOL_VERSION = '1';
/** A line longer than this corrupts the channel (architecture.md §4). */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;
/** JSON-RPC error code for host API refusals. */
export const API_ERROR_RPC_CODE = -32000;

const IdSchema = z.union([z.string(), z.number().int()]);

export const RpcRequestSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: IdSchema,
  method: z.string().min(1),
  params: JsonObjectSchema.default({}),
});
export type RpcRequest = z.infer<typeof RpcRequestSchema>;

export const RpcNotificationSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  method: z.string().min(1),
  params: JsonObjectSchema.default({}),
});
export type RpcNotification = z.infer<typeof RpcNotificationSchema>;

export const RpcErrorSchema = z.looseObject({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type RpcError = z.infer<typeof RpcErrorSchema>;

export const RpcResponseSchema = z.union([
  z.strictObject({ jsonrpc: z.literal('2.0'), id: IdSchema, result: z.unknown() }),
  z.strictObject({ jsonrpc: z.literal('2.0'), id: IdSchema.nullable(), error: RpcErrorSchema }),
]);
export type RpcResponse = z.infer<typeof RpcResponseSchema>;

/** Any one line of the channel. Order matters: a request has both id and method. */
export const RpcMessageSchema = z.union([RpcRequestSchema, RpcNotificationSchema, RpcResponseSchema]);
export type RpcMessage = z.infer<typeof RpcMessageSchema>;

export const InitializeParamsSchema = z.strictObject({
  protocol_version: z.string(),
  host: z.strictObject({ name: z.string(), version: z.string() }),
});
export type InitializeParams = z.infer<typeof InitializeParamsSchema>;

export const InitializeResultSchema = z.looseObject({
  plugin: z.looseObject({ author: z.string(), name: z.string(), version: z.string().optional() }),
  runners: z.array(JsonObjectSchema).default([]),
});
export type InitializeResult = z.infer<typeof InitializeResultSchema>;

export const RunParamsSchema = z.strictObject({
  run_id: z.string().min(1),
  runner_name: z.string().min(1),
  context: RunContextSchema,
});
export type RunParams = z.infer<typeof RunParamsSchema>;

export const RunStatusSchema = z.enum(['completed', 'failed', 'cancelled']);
export const RunReplySchema = z.looseObject({ status: RunStatusSchema });
export type RunReply = z.infer<typeof RunReplySchema>;

export const RunResultNotificationSchema = z.strictObject({
  run_id: z.string().min(1),
  result: RunResultSchema,
});

export const RunCancelParamsSchema = z.strictObject({ run_id: z.string().min(1) });

export { AgentApiErrorSchema };

/** Host → plugin and plugin → host methods that are not proxy actions. */
export const WIRE_METHODS = {
  initialize: 'initialize',
  run: 'run',
  runResult: 'run/result',
  runCancel: 'run/cancel',
  shutdown: 'shutdown',
  modelStreamChunk: 'models.stream/chunk',
} as const;
