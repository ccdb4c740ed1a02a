// The tool table of each run: native box tools, the skills `activate` tool and MCP tools, merged by the tool
// manager, with the skills access rule applied before every native call. Also owns the box service, or the
// client of the remote box (`box.remote.url`) that the native tools use instead.
import { readFileSync, statSync } from 'node:fs';
import type { Config } from '../../core/config.js';
import type { ToolProvider } from '../../core/host/ports.js';
import type { ToolsRequest } from '../../core/host/host.js';
import type { Binding } from '../../core/protocol/binding.js';
import { loadSkillCatalog } from '../../core/skills/index.js';
import { guardNativeCall, prepareRunSkills, SkillToolSource } from '../../core/skills/tool-source.js';
import { NATIVE_TOOL_NAMES } from '../../core/tools/native-defs.js';
import type { BoxToolPort } from '../../core/tools/native.js';
import type { ToolSource } from '../../core/tools/types.js';
import { RemoteBoxClient } from '../box/remote/client.js';
import { RemoteBoxToolPort } from '../box/remote/tool-port.js';
import { createBoxService, type BoxService } from '../box/service.js';
import { BoxToolPortImpl, createToolsHook } from './box-tools.js';

export type RunToolsOptions = {
  dataDir: string;
  config: Config;
  owner: 'cli' | 'serve';
  warn(message: string): void;
  /** Where LBOT_BOX_TOKEN is read for a remote box (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** More sources per run (MCP servers). */
  extraSources?(req: { binding: Binding; run_id: string }): Promise<ToolSource[]>;
};

export type RunTools = {
  /** The local box service; null when the native tools run on a remote box. */
  box: BoxService | null;
  tools(req: ToolsRequest): Promise<ToolProvider>;
};

const isDirectory = (p: string): boolean => statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
const isNative = (name: string): boolean => (NATIVE_TOOL_NAMES as readonly string[]).includes(name);

/** The box of the native tools: a remote box server when `box.remote.url` is set (and box is enabled), else local. */
function openToolBox(opts: RunToolsOptions): { box: BoxService | null; port: BoxToolPort } {
  const url = opts.config.box.remote.url;
  if (url && opts.config.box.enabled) {
    const caFile = opts.config.box.remote.ca_file;
    const client = new RemoteBoxClient({
      url,
      token: (opts.env ?? process.env).LBOT_BOX_TOKEN ?? null,
      ...(caFile ? { ca: readFileSync(caFile) } : {}),
    });
    return { box: null, port: new RemoteBoxToolPort(client, opts.warn) };
  }
  const box = createBoxService({ dataDir: opts.dataDir, config: opts.config.box, owner: opts.owner, warn: opts.warn });
  return { box, port: new BoxToolPortImpl(box) };
}

export function createRunTools(opts: RunToolsOptions): RunTools {
  const { box, port } = openToolBox(opts);
  // The skills source of a run is built just before its table, and read back here by run id.
  const skillSources = new Map<string, ToolSource>();
  const hook = createToolsHook({
    port,
    warn: opts.warn,
    extraSources: async (req) => {
      const skill = skillSources.get(req.run_id);
      return [...(skill ? [skill] : []), ...(opts.extraSources ? await opts.extraSources(req) : [])];
    },
  });
  return {
    box,
    async tools(req) {
      const skills = req.binding.skills.length ? prepareRunSkills(req.binding, await loadSkillCatalog(opts.dataDir), isDirectory) : null;
      for (const w of skills?.warnings ?? []) opts.warn(w);
      if (skills) skillSources.set(req.run_id, new SkillToolSource(skills, () => port.available()));
      const table = await hook({ ...req, ...(skills ? { skill_mounts: skills.mounts } : {}) }).finally(() => skillSources.delete(req.run_id));
      if (!skills) return table;
      return {
        list: () => table.list(),
        call: (name, params, ctx) => {
          if (isNative(name)) guardNativeCall(skills, name, params);
          return table.call(name, params, ctx);
        },
      };
    },
  };
}
