// The tool table of each run: native box tools, the skills `activate` tool and MCP tools, merged by the tool
// manager, with the skills access rule applied before every native call. Also owns the box service.
import { statSync } from 'node:fs';
import type { Config } from '../../core/config.js';
import type { ToolProvider } from '../../core/host/ports.js';
import type { ToolsRequest } from '../../core/host/host.js';
import type { Binding } from '../../core/protocol/binding.js';
import { loadSkillCatalog } from '../../core/skills/index.js';
import { guardNativeCall, prepareRunSkills, SkillToolSource } from '../../core/skills/tool-source.js';
import { NATIVE_TOOL_NAMES } from '../../core/tools/native-defs.js';
import type { ToolSource } from '../../core/tools/types.js';
import { createBoxService, type BoxService } from '../box/service.js';
import { BoxToolPortImpl, createToolsHook } from './box-tools.js';

export type RunToolsOptions = {
  dataDir: string;
  config: Config;
  owner: 'cli' | 'serve';
  warn(message: string): void;
  /** More sources per run (MCP servers). */
  extraSources?(req: { binding: Binding; run_id: string }): Promise<ToolSource[]>;
};

export type RunTools = {
  box: BoxService;
  tools(req: ToolsRequest): Promise<ToolProvider>;
};

const isDirectory = (p: string): boolean => statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
const isNative = (name: string): boolean => (NATIVE_TOOL_NAMES as readonly string[]).includes(name);

export function createRunTools(opts: RunToolsOptions): RunTools {
  const box = createBoxService({ dataDir: opts.dataDir, config: opts.config.box, owner: opts.owner, warn: opts.warn });
  const port = new BoxToolPortImpl(box);
  // The skills source of a run is built just before its table, and read back here by run id.
  const skillSources = new Map<string, ToolSource>();
  const hook = createToolsHook({
    box,
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
