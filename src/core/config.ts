// The lbot config file schema (`<data-dir>/lbot.config.json`), env overrides and secret masking.
import { z } from 'zod';
import { BindingSchema } from './protocol/binding.js';
import { PlatformAccountSchema } from './delivery/accounts.js';
import { ScheduleSchema } from './schedules/schedule.js';
import { assertSafeEnv } from './env-policy.js';
import { LbotError } from './errors.js';
import { isRecord } from './json.js';
import { firstIssue } from './zod-issue.js';

export const ModelConfigSchema = z.looseObject({
  id: z.string().min(1),
  provider: z.enum(['fake', 'openai', 'anthropic']),
  /** llm, embedding or rerank: what the model is granted for (docs/models.md). */
  model_type: z.string().default('llm'),
  /** provider `fake`: the reply text. */
  reply: z.string().optional(),
  /** provider `openai` / `anthropic`: the endpoint and the upstream model name. */
  base_url: z.string().optional(),
  model: z.string().optional(),
  /** The key itself (kept in the 0600 config file) or the name of the env var that holds it. */
  api_key: z.string().optional(),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'api_key_env must be an environment variable name')
    .optional(),
  /** False for a model without function calling: tools are dropped (runner-protocol §7.2). */
  function_calling: z.boolean().default(true),
  /** Strips `<think>…</think>` reasoning blocks from replies unless a call says otherwise. */
  remove_think: z.boolean().default(false),
  /** `max_tokens` when a call sets none, and the most a call may ask for. */
  max_tokens: z.number().int().positive().default(1024),
  max_tokens_cap: z.number().int().positive().default(8192),
  /** Tokenizer encoding for models.count_tokens (e.g. o200k_base); default: known from the model name. */
  tokenizer: z.string().optional(),
  context_window: z.number().int().positive().optional(),
  /** Per-attempt timeout, bounded by the run deadline; retries on 429/5xx/connection errors. */
  timeout_ms: z.number().int().positive().default(120_000),
  max_retries: z.number().int().min(0).max(10).default(2),
  /** Extra `extra_args` keys a runner may pass for this model, beyond the built-in allowlist. */
  allowed_extra_args: z.array(z.string()).default([]),
  /** The operator's stored args; a call's allowed args override them key by key. */
  extra_args: z.record(z.string(), z.unknown()).default({}),
});
export type ModelConfig = z.infer<typeof ModelConfigSchema>;

/** Env overrides arrive as text: "a,b" is a list, and false/0/no/off/'' switch a flag off (box.md §11.2). */
const commaList = (v: unknown) =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : v;
const looseBool = (v: unknown) => {
  if (v === 0 || v === '' || (typeof v === 'string' && ['false', '0', 'no', 'off'].includes(v.toLowerCase()))) return false;
  if (v === 1 || (typeof v === 'string' && ['true', '1', 'yes', 'on'].includes(v.toLowerCase()))) return true;
  return v;
};

/** A knowledge base served by the built-in local engine: documents kept in the config, ranked by term overlap. */
export const KnowledgeBaseConfigSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().nullable().default(null),
  kb_type: z.string().default('local'),
  documents: z.array(z.looseObject({ id: z.string().optional(), text: z.string(), metadata: z.record(z.string(), z.unknown()).default({}) })).default([]),
});
export type KnowledgeBaseConfig = z.infer<typeof KnowledgeBaseConfigSchema>;

/**
 * The uid/gid sandboxes run as when lbot runs as root: the distroless "nonroot" id, unprivileged and
 * distinct from the overflow id 65534 that unmapped owners (host root among them) show as inside.
 */
export const DEFAULT_SANDBOX_ID = 65532;

/** A remote box runtime (`lbot box serve`, docs/box.md "Remote box"); the token comes from LBOT_BOX_TOKEN. */
export const BoxRemoteConfigSchema = z.looseObject({
  url: z
    .preprocess(
      (v) => (v === '' ? null : v),
      z
        .string()
        .regex(/^https?:\/\/[^/\s]+\/?$/, 'box.remote.url is http(s)://HOST:PORT')
        .nullable(),
    )
    .default(null),
  /** A PEM file of the CA (or the self-signed certificate) that signed the box server's certificate. */
  ca_file: z.string().min(1).nullable().default(null),
});

export const BoxConfigSchema = z.looseObject({
  enabled: z.preprocess(looseBool, z.boolean()).default(true),
  backend: z.enum(['auto', 'bwrap', 'docker', 'podman', 'host']).default('auto'),
  profile: z.string().default('default'),
  allowed_mount_roots: z.preprocess(commaList, z.array(z.string())).default([]),
  default_workspace: z.string().nullable().default(null),
  workspace_quota_mb: z.number().nonnegative().default(1024),
  session_ttl_sec: z.number().nonnegative().default(1800),
  max_sessions: z.number().int().positive().default(16),
  output_limit_chars: z.number().int().positive().default(4000),
  image: z.string().default('debian:bookworm-slim'),
  /** per_session: each session gets its own workspace; shared: every session mounts default_workspace. */
  workspace_scope: z.enum(['per_session', 'shared']).default('per_session'),
  limits: z
    .looseObject({
      max_managed_processes: z.number().int().positive().default(32),
      max_managed_processes_per_session: z.number().int().positive().default(8),
      reaper_interval_sec: z.number().positive().default(30),
    })
    .prefault({}),
  bwrap: z
    .looseObject({
      bin: z.string().default('bwrap'),
      base_dir: z.string().nullable().default(null),
      limits: z.enum(['auto', 'cgroup', 'rlimit']).default('auto'),
      /** As root, sandboxes run as this unprivileged uid/gid (never 0). */
      sandbox_uid: z.number().int().min(1).max(4_294_967_294).default(DEFAULT_SANDBOX_ID),
      sandbox_gid: z.number().int().min(1).max(4_294_967_294).default(DEFAULT_SANDBOX_ID),
      /** Run execs through the exec agent inside each session (false: every exec enters with nsenter). */
      exec_agent: z.boolean().default(true),
    })
    .prefault({}),
  /** Set: the native box tools of every run go to this box server instead of a local backend. */
  remote: BoxRemoteConfigSchema.prefault({}),
});
export type BoxConfig = z.infer<typeof BoxConfigSchema>;

export const McpServerConfigSchema = z.looseObject({
  name: z.string().min(1),
  enabled: z.boolean().default(true),
  transport: z.enum(['stdio', 'sse', 'http']).default('stdio'),
  command: z.array(z.string()).optional(),
  url: z.string().optional(),
  env: z.record(z.string(), z.string()).default({}),
  headers: z.record(z.string(), z.string()).default({}),
  in_box: z.boolean().default(false),
});
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

/** Secrets platforms use to sign or authenticate webhook calls (docs/serve.md). */
export const WebhookAuthSchema = z.looseObject({
  slack: z.looseObject({ signing_secret: z.string().min(1) }).optional(),
  telegram: z.looseObject({ secret_token: z.string().min(1) }).optional(),
  lark: z.looseObject({ verification_token: z.string().min(1) }).optional(),
  discord: z.looseObject({ public_key: z.string().regex(/^[0-9a-fA-F]{64}$/, 'public_key must be 64 hex characters') }).optional(),
});
export type WebhookAuth = z.infer<typeof WebhookAuthSchema>;

export const DEFAULT_RUNNER_ALIASES: Record<string, string> = {
  'local-agent': 'plugin:langbot/local-agent/default',
  'dify-service-api': 'plugin:langbot/dify-agent/default',
  'n8n-service-api': 'plugin:langbot/n8n-agent/default',
  'coze-api': 'plugin:langbot/coze-agent/default',
  'dashscope-app-api': 'plugin:langbot/dashscope-agent/default',
  'langflow-api': 'plugin:langbot/langflow-agent/default',
  'tbox-app-api': 'plugin:langbot/tbox-agent/default',
};

export const ConfigSchema = z.looseObject({
  plugins: z
    .looseObject({
      enabled: z.boolean().default(true),
      /** auto: the bubblewrap sandbox where it works, else unisolated with a warning (docs/host.md). */
      isolation: z.enum(['auto', 'sandbox', 'none']).default('auto'),
      /** Per plugin process, enforced by the box's limits layer when the plugin is sandboxed. */
      limits: z
        .looseObject({
          memory_mb: z.number().int().min(16).default(1024),
          pids: z.number().int().min(8).default(256),
          cpus: z.number().positive().default(2),
        })
        .prefault({}),
      /** Crash-loop backoff: a plugin started this many times within the window waits before the next start. */
      restart_limit: z
        .looseObject({
          starts: z.number().int().min(1).default(5),
          window_ms: z.number().int().min(100).default(10_000),
        })
        .prefault({}),
    })
    .prefault({}),
  /** LangBot SDK plugins (docs/langbot-plugins.md): the Python they run on; else LBOT_LANGBOT_PYTHON, the plugin's .venv, python3. */
  langbot: z.looseObject({ python: z.string().min(1).optional() }).prefault({}),
  models: z.array(ModelConfigSchema).default([]),
  knowledge_bases: z.array(KnowledgeBaseConfigSchema).default([]),
  bindings: z.array(BindingSchema).default([]),
  /** Accounts replies are sent with (`lbot platform add`; docs/delivery.md). */
  platforms: z.array(PlatformAccountSchema).default([]),
  /** Events fired on a cron schedule by `lbot serve` (`lbot schedule add`; docs/schedules.md). */
  schedules: z.array(ScheduleSchema).default([]),
  box: BoxConfigSchema.prefault({}),
  mcp: z.looseObject({ servers: z.array(McpServerConfigSchema).default([]) }).prefault({}),
  serve: z
    .looseObject({
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8787),
      max_concurrent_runs: z.number().int().positive().default(64),
      max_runs_per_plugin: z.number().int().positive().default(16),
      /** Runs of one (binding, conversation) waiting their turn under run_policy enqueue; more answer 429. */
      max_queued_per_conversation: z.number().int().positive().max(10_000).default(16),
      /** Group commit: how long the SQLite writes of serve may wait to share one commit; 0 commits each at once. */
      commit_window_ms: z.number().int().nonnegative().max(1000).default(5),
      /** Platform webhook verification; a platform with one configured may call its webhook without the bearer token. */
      webhooks: WebhookAuthSchema.prefault({}),
    })
    .prefault({}),
  runs: z
    .looseObject({
      cancel_grace_ms: z.number().int().nonnegative().default(2000),
      /** Group commit of the SQLite writes of `lbot run`: how long they may wait to share one commit; 0 commits each at once. */
      commit_window_ms: z.number().int().nonnegative().max(1000).default(5),
      max_event_data_bytes: z
        .number()
        .int()
        .positive()
        .default(1024 * 1024),
    })
    .prefault({}),
  storage: z
    .looseObject({
      max_value_bytes: z
        .number()
        .int()
        .default(10 * 1024 * 1024),
    })
    .prefault({}),
  runner_aliases: z.record(z.string(), z.string()).default({}),
});
export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

/** A value typed by a person (an env override, `lbot config set`): JSON when it parses (true, 3, ["a"]), else the raw string. */
export function parseValueText(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/**
 * Applies `LBOT__SECTION__KEY=value` overrides onto a raw config object (acceptance §0.1).
 * Keys are lower-cased; nested keys use more `__` separators.
 */
export function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(raw);
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('LBOT__') || value === undefined) continue;
    const path = name.slice('LBOT__'.length).toLowerCase().split('__').filter(Boolean);
    if (path.length === 0 || path.some((p) => p === '__proto__' || p === 'constructor' || p === 'prototype')) continue;
    let node: Record<string, unknown> = out;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      if (isRecord(next)) node = next;
      else {
        const fresh: Record<string, unknown> = {};
        node[key] = fresh;
        node = fresh;
      }
    }
    const last = path.at(-1);
    if (last) node[last] = parseValueText(value);
  }
  return out;
}

/**
 * Every env map the config hands to a process (a binding's plugin process, an MCP server) passes the
 * env policy; a refused name fails the load with env.denied naming the entry.
 */
function assertConfigEnv(config: Config, file: string): void {
  for (const [i, b] of config.bindings.entries()) assertSafeEnv(b.env, `${file}: bindings.${i} (${b.binding_id}).env`);
  for (const [i, m] of config.mcp.servers.entries()) {
    assertSafeEnv(m.env, `${file}: mcp.servers.${i} (${m.name}).env`);
    const box: unknown = m.box;
    if (isRecord(box) && isRecord(box.env)) assertSafeEnv(stringValues(box.env), `${file}: mcp.servers.${i} (${m.name}).box.env`);
  }
}

/** The string-valued entries of a loose record (the names are what the env policy judges). */
function stringValues(record: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(record)) out[k] = typeof v === 'string' ? v : String(v);
  return out;
}

/** Validates a raw config object; names the file and the first bad field on failure. */
export function parseConfig(raw: unknown, file: string): Config {
  const parsed = ConfigSchema.safeParse(raw);
  if (parsed.success) {
    assertConfigEnv(parsed.data, file);
    return parsed.data;
  }
  const issue = firstIssue(parsed.error);
  throw new LbotError('config.invalid', `${file}: ${issue.text}`, {
    details: { file, path: issue.path },
    hint: 'fix the field or remove it to use the default',
  });
}

// `token(?!s)`: max_tokens, context_window_tokens and other token counts are settings, not credentials.
const SECRET_KEY = /(secret|token(?!s)|key|password|credential)/i;
export const MASK = '****';

/** Deep copy with every value under a secret-looking key replaced by MASK (AC-160, AC-181, AC-212). */
export function maskSecrets(value: unknown): unknown {
  const walk = (v: unknown, key: string | null): unknown => {
    if (key !== null && SECRET_KEY.test(key) && (typeof v === 'string' || typeof v === 'number')) return MASK;
    if (Array.isArray(v)) return v.map((x) => walk(x, null));
    if (isRecord(v)) {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[k] = walk(x, k);
      return o;
    }
    return v;
  };
  return walk(value, null);
}

/** Resolves a `--runner` value through the aliases (built-in, then the config's). */
export function resolveRunnerAlias(id: string, config: Pick<Config, 'runner_aliases'>): string {
  return config.runner_aliases[id] ?? DEFAULT_RUNNER_ALIASES[id] ?? id;
}
