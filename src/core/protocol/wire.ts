// JSON-RPC 2.0 framing of the plugin protocol (architecture.md §4): message shapes and the
// host ↔ plugin methods other than the proxy API.
import { z } from 'zod';
import { isRecord } from '../json.js';
import { JsonObjectSchema, type JsonObject } from './event.js';
import { RunContextSchema } from './context.js';
import { RunResultSchema } from './results.js';
import { AgentApiErrorSchema, ModelStreamChunkSchema } from './proxy.js';

export const PROTOCOL_VERSION = '1';
/** A line longer than this corrupts the channel (architecture.md §4). */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;
/** The JSON-RPC error codes either end answers with; -32000 carries an `AgentAPIError` in `data`. */
export const RPC_ERROR_CODES = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  apiError: -32000,
} as const;

const IdSchema = z.union([z.string(), z.number().int()]);
/**
 * The params of a request or notification: an object, checked as one and kept as it is. The method's own
 * schema checks its fields next; a record schema here would copy every key of every line first (about 5 µs
 * a line before the JIT has warmed, on both ends of the channel).
 */
const ParamsSchema = z.custom<JsonObject>(isRecord, { message: 'params must be an object' });

export const RpcRequestSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: IdSchema,
  method: z.string().min(1),
  params: ParamsSchema.default({}),
});
export type RpcRequest = z.infer<typeof RpcRequestSchema>;

export const RpcNotificationSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  method: z.string().min(1),
  params: ParamsSchema.default({}),
});
export type RpcNotification = z.infer<typeof RpcNotificationSchema>;

export const RpcErrorSchema = z.looseObject({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type RpcError = z.infer<typeof RpcErrorSchema>;

const RpcResultResponseSchema = z.strictObject({ jsonrpc: z.literal('2.0'), id: IdSchema, result: z.unknown() });
const RpcErrorResponseSchema = z.strictObject({ jsonrpc: z.literal('2.0'), id: IdSchema.nullable(), error: RpcErrorSchema });
export const RpcResponseSchema = z.union([RpcResultResponseSchema, RpcErrorResponseSchema]);
export type RpcResponse = z.infer<typeof RpcResponseSchema>;

/** Any one line of the channel. Order matters: a request has both id and method. */
export const RpcMessageSchema = z.union([RpcRequestSchema, RpcNotificationSchema, RpcResponseSchema]);
export type RpcMessage = z.infer<typeof RpcMessageSchema>;

/**
 * One line's value as a message, as RpcMessageSchema decides it: the variants are strict objects that
 * exclude each other by their keys, so the one to check is picked by `method`, `id` and `error` (the union
 * tries them in turn, and the answer every call gets back was its third attempt).
 */
export function parseRpcMessage(value: unknown): { success: true; data: RpcMessage } | { success: false } {
  if (!isRecord(value)) return RpcMessageSchema.safeParse(value);
  if ('method' in value) return ('id' in value ? RpcRequestSchema : RpcNotificationSchema).safeParse(value);
  return ('error' in value ? RpcErrorResponseSchema : RpcResultResponseSchema).safeParse(value);
}

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

export const ShutdownParamsSchema = z.strictObject({});
export const ShutdownResultSchema = z.looseObject({});

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

/** Which end of the channel sends a message. */
export type RpcSide = 'host' | 'plugin';

/**
 * The control methods: who may send each, its params and, for a request, its result. Proxy actions
 * (plugin → host requests) have their own table in proxy.ts.
 */
export const controlMethods = {
  [WIRE_METHODS.initialize]: { kind: 'request', from: 'host', params: InitializeParamsSchema, result: InitializeResultSchema },
  [WIRE_METHODS.run]: { kind: 'request', from: 'host', params: RunParamsSchema, result: RunReplySchema },
  [WIRE_METHODS.shutdown]: { kind: 'request', from: 'host', params: ShutdownParamsSchema, result: ShutdownResultSchema },
  [WIRE_METHODS.runResult]: { kind: 'notification', from: 'plugin', params: RunResultNotificationSchema },
  [WIRE_METHODS.runCancel]: { kind: 'notification', from: 'host', params: RunCancelParamsSchema },
  [WIRE_METHODS.modelStreamChunk]: { kind: 'notification', from: 'host', params: ModelStreamChunkSchema },
} as const;

type ControlMethods = typeof controlMethods;
export type ControlMethod = keyof ControlMethods;
/** The control requests `side` may send. */
export type ControlRequest<S extends RpcSide> = { [M in ControlMethod]: ControlMethods[M] extends { kind: 'request'; from: S } ? M : never }[ControlMethod];
/** The control notifications `side` may send. */
export type ControlNotification<S extends RpcSide> = {
  [M in ControlMethod]: ControlMethods[M] extends { kind: 'notification'; from: S } ? M : never;
}[ControlMethod];
export type ControlParamsInput<M extends ControlMethod> = z.input<ControlMethods[M]['params']>;
export type ControlParams<M extends ControlMethod> = z.output<ControlMethods[M]['params']>;
export type ControlResult<M extends ControlRequest<RpcSide>> = ControlMethods[M] extends { result: z.ZodType<infer R> } ? R : never;

export function isControlMethod(method: string): method is ControlMethod {
  return Object.hasOwn(controlMethods, method);
}
