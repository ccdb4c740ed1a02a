// `lbot model …`: add, list, show, test and remove configured models, and run the fake upstream (docs/models.md).
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import type { ModelSummary, ModelTestResult } from '../runtime/models/admin.js';
import { EXIT } from './shared/exit-codes.js';
import { parseFlags } from './shared/flags.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

const AddFlagsSchema = z.object({
  provider: z.enum(['openai', 'anthropic', 'fake'], { message: 'must be openai, anthropic or fake' }),
  baseUrl: z.string().optional(),
  model: z.string().optional(),
  apiKeyEnv: z.string().optional(),
  apiKeyStdin: z.boolean().default(false),
  reply: z.string().optional(),
  type: z.string().optional(),
  /** Commander's `--no-tools` sets `tools: false`. */
  tools: z.boolean().default(true),
  tokenizer: z.string().optional(),
  contextWindow: z.coerce.number().int().positive().optional(),
});
const FakeServerFlagsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535).default(0),
  host: z.string().default('127.0.0.1'),
  script: z.string().optional(),
});

const admin = () => import('../runtime/models/admin.js');

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const key = Buffer.concat(chunks).toString('utf8').trim();
  if (!key) throw new LbotError('invalid_argument', '--api-key-stdin: no key on standard input');
  return key;
}

function renderList(models: readonly ModelSummary[]): string {
  if (models.length === 0) return 'no models configured (add one with lbot model add NAME --provider openai --base-url URL --model ID --api-key-env VAR)';
  const w = Math.max(...models.map((m) => m.id.length));
  return models.map((m) => `${m.id.padEnd(w)}  ${m.provider.padEnd(9)}  ${m.model ?? '-'}  ${m.base_url ?? ''}  key ${m.key}`).join('\n');
}

function renderTest(r: ModelTestResult): string {
  const mark = (ok: boolean) => (ok ? 'ok' : 'FAILED');
  return [
    `${r.name}: ${r.ok ? 'ok' : 'FAILED'}`,
    `  request: ${r.error ? `FAILED: ${r.error}` : `ok in ${r.latency_ms ?? '-'} ms`}`,
    `  upstream model: ${r.upstream_model ?? '-'}`,
    `  usage: ${r.usage ? `${r.usage.prompt_tokens} prompt + ${r.usage.completion_tokens} completion = ${r.usage.total_tokens} tokens` : 'not reported'}`,
    `  streaming: ${mark(r.streaming.ok)}${r.streaming.error ? `: ${r.streaming.error}` : ''}`,
    `  tool calls: ${r.tool_calls.supported ? mark(r.tool_calls.ok) : 'off'}${r.tool_calls.error ? `: ${r.tool_calls.error}` : ''}`,
  ].join('\n');
}

export function registerModel(program: Command, getCtx: GetContext): void {
  const model = program.command('model').description('Configure the models runs may be granted, and test them');

  model
    .command('add <name>')
    .description('add a model: --provider openai|anthropic|fake --base-url URL --model ID --api-key-env VAR')
    .option('--provider <provider>', 'openai (any OpenAI-compatible endpoint), anthropic or fake')
    .option('--base-url <url>', 'endpoint, e.g. https://api.openai.com/v1 (openai) or https://api.anthropic.com (anthropic)')
    .option('--model <id>', 'the upstream model name (default: NAME)')
    .option('--api-key-env <var>', 'environment variable that holds the key when lbot runs')
    .option('--api-key-stdin', 'read the key from standard input and store it in the 0600 config file')
    .option('--reply <text>', 'provider fake: the reply text')
    .option('--type <type>', 'llm (default), embedding or rerank')
    .option('--no-tools', 'the model has no function calling: tools are never sent')
    .option('--tokenizer <name>', 'encoding for models.count_tokens (o200k_base, cl100k_base, …)')
    .option('--context-window <tokens>', 'context window reported by models.count_tokens')
    .action(async (name: string, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(AddFlagsSchema, raw);
      const { addModel } = await admin();
      const added = await addModel(ctx.configFile(), {
        name,
        provider: flags.provider,
        base_url: flags.baseUrl,
        model: flags.model,
        api_key_env: flags.apiKeyEnv,
        api_key: flags.apiKeyStdin ? await readStdin() : undefined,
        reply: flags.reply,
        model_type: flags.type,
        function_calling: flags.tools ? undefined : false,
        tokenizer: flags.tokenizer,
        context_window: flags.contextWindow,
      });
      ctx.output.item(shapes.Model, added, () => `added model ${name} (test it with lbot model test ${name})`);
    });

  model
    .command('list')
    .description('configured models (keys never shown)')
    .action(async () => {
      const ctx = getCtx();
      const { listModels } = await admin();
      ctx.output.list(shapes.Model, listModels(ctx.configFile().config).models, renderList);
    });

  model
    .command('show <name>')
    .description('one model: its config with secrets masked, tokenizer and context window')
    .action(async (name: string) => {
      const ctx = getCtx();
      const { showModel } = await admin();
      ctx.output.item(shapes.ModelDetail, showModel(ctx.configFile().config, name), (v) => JSON.stringify(v, null, 2));
    });

  model
    .command('test <name>')
    .description('send tiny requests: latency, upstream model, usage, and whether streaming and tool calls work')
    .action(async (name: string) => {
      const ctx = getCtx();
      const { testModel } = await admin();
      const result = await testModel(ctx.configFile().config, name);
      ctx.output.item(shapes.ModelTest, result, renderTest);
      if (!result.ok) ctx.exitCode = EXIT.unavailable;
    });

  model
    .command('rm <name>')
    .description('remove a model from the config')
    .action(async (name: string) => {
      const ctx = getCtx();
      const { removeModel } = await admin();
      ctx.output.item(shapes.Removed, { ok: true, removed: (await removeModel(ctx.configFile(), name)).removed }, () => `removed model ${name}`);
    });

  model
    .command('fake-server')
    .description('run a fake OpenAI-compatible and Anthropic upstream for tests and CI (--script FILE, docs/models.md)')
    .option('--port <port>', 'TCP port (0 picks a free one)', '0')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--script <file>', 'the JSON script of replies and faults')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(FakeServerFlagsSchema, raw);
      const [{ startFakeModelServer }, { parseFakeScript }] = await Promise.all([
        import('../runtime/models/fake-server.js'),
        import('../runtime/models/fake-server-script.js'),
      ]);
      const script = parseFakeScript(flags.script ? await readFile(flags.script, 'utf8') : '{}', flags.script ?? '(no script)');
      const server = await startFakeModelServer(script, { host: flags.host, port: flags.port });
      ctx.output.item(
        shapes.FakeModelServer,
        { url: server.url, openai_base_url: server.openaiBaseUrl, anthropic_base_url: server.anthropicBaseUrl, port: server.port },
        (v) => `fake model server on ${v.url} (openai base_url ${v.openai_base_url}, anthropic base_url ${v.anthropic_base_url})`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
    });
}
