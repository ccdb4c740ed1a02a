// lbot/sdk: what runner authors import to write a runner plugin.
export { definePlugin, defineRunner, isPlugin, type Plugin, type PluginInfo, type Runner, type RunnerContext, type RunnerResult } from './define.js';
export { ApiCallError, type ApiTransport, type CallOptions, type ProxyArgs, type RunnerApi } from './client.js';
export { actionRequested, artifactCreated, completed, delta, failed, message, stateUpdated, toolCompleted, toolStarted } from './results.js';
export { createTestContext, runInProcess, type ApiHandlers, type ContextOverrides } from './testing.js';
export type {
  AgentApiError,
  Message,
  MessageChunk,
  ModelReply,
  ModelUsage,
  ProxyMethod,
  ProxyResult,
  RunContext,
  StateScope,
  ToolCall,
  TranscriptItem,
} from '../core/protocol/index.js';
export { PROTOCOL_VERSION, proxyMethods } from '../core/protocol/index.js';
// The SDK's own zod, for a runner's schemas: importing the `zod` package beside it would load a second copy,
// about 100 ms more of every plugin start (docs/writing-a-runner.md "Validating with `z`").
export { z } from 'zod';
