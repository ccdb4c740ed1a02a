// Every named shape of `--json` output (docs/cli.md, "JSON output"; `lbot schema NAME` prints one).
export type { Shape, ShapeKind } from './shape.js';
export { DoctorReport, ErrorEnvelope, JsonSchema, Removed, ShapeInfo } from './common.js';
export { StreamItem } from './stream.js';
export { Artifact, ArtifactBytes, Conversation, DbSchema, EventRecord, RunRecord, StateChange, StateEntry, StateValue, TranscriptItem } from './stores.js';
export { Binding, Config, ConfigChange, ConfigValue, OutboxMessage, PlatformAccount, RunStarted, Schedule } from './config.js';
export { ServeLine, ServeToken, WorkerLine } from './serve.js';
export { ConformanceReport, Runner, RunnerDetail, ScaffoldedRunner } from './runners.js';
export {
  FakeModelServer,
  McpCall,
  McpLogin,
  McpLogout,
  McpServer,
  McpServerConfig,
  McpServerDetail,
  McpTest,
  McpTool,
  Model,
  ModelDetail,
  ModelTest,
} from './mcp.js';
export { KbCreated, KbDetail, KbIngestion, KbProgress, KbSearch, KnowledgeBase } from './knowledge.js';
export { BoxError, BoxExec, BoxProcess, BoxProcessStopped, BoxProfile, BoxServeLine, BoxSession, BoxStatus } from './box.js';
export { Skill, SkillCreated, SkillDetail, SkillFile, SkillInstall, SkillReport } from './skills.js';
