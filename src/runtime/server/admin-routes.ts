// HTTP mirrors of the box, skill and MCP commands for `lbot serve` (reads, box exec and session removal).
// Heavy modules load on first use; every route sits under /v1 and needs the bearer token.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import type { ConfigFile } from '../../core/stores/config-file.js';
import type { BoxService } from '../box/service.js';
import { parseOrThrow } from '../../core/zod-issue.js';

export type AdminDeps = {
  dataDir: string;
  configFile: ConfigFile;
  box(): Promise<BoxService | null>;
  warn(message: string): void;
};

const ExecBodySchema = z.strictObject({
  cmd: z.string().min(1),
  session_id: z.string().min(1).optional(),
  profile: z.string().optional(),
  timeout_sec: z.number().positive().optional(),
  network: z.enum(['on', 'off']).optional(),
  workdir: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
});

async function requireBox(deps: AdminDeps): Promise<BoxService> {
  const box = await deps.box();
  if (!box) throw new LbotError('box.unavailable', 'this server has no box service', { details: { reason: 'disabled' } });
  return box;
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps): void {
  app.get('/v1/box/status', async () => (await requireBox(deps)).status());
  app.get('/v1/box/sessions', async () => ({ sessions: await (await requireBox(deps)).sessions() }));
  app.get<{ Params: { id: string } }>('/v1/box/sessions/:id', async (req) => (await requireBox(deps)).session(req.params.id));
  app.delete<{ Params: { id: string } }>('/v1/box/sessions/:id', async (req) => {
    await (await requireBox(deps)).removeSession(req.params.id);
    return { ok: true, removed: req.params.id };
  });
  app.post('/v1/box/exec', async (req) => {
    const spec = parseOrThrow(ExecBodySchema, req.body, 'POST /v1/box/exec', '(body)', 'box.validation');
    const { result, effective_spec } = await (await requireBox(deps)).exec(spec);
    return { ...result, effective_spec };
  });

  app.get('/v1/skills', async () => {
    const { listSkills } = await import('../../core/skills/store.js');
    return { skills: await listSkills(deps.dataDir) };
  });
  app.get<{ Params: { name: string } }>('/v1/skills/:name', async (req) => {
    const { getSkill } = await import('../../core/skills/store.js');
    return getSkill(deps.dataDir, req.params.name);
  });

  const mcpContext = () => ({ dataDir: deps.dataDir, configFile: deps.configFile, warn: deps.warn });
  app.get('/v1/mcp/servers', async () => (await import('../mcp/admin.js')).listServers(mcpContext()));
  app.get<{ Params: { name: string } }>('/v1/mcp/servers/:name', async (req) => (await import('../mcp/admin.js')).showServer(mcpContext(), req.params.name));
}
