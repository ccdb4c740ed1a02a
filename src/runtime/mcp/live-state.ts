// Where a host process (`lbot serve`, `lbot run`) publishes the runtime info of the MCP sessions it
// holds, so that `lbot mcp list` in another process can show them: one file per host process under
// `<data-dir>/mcp/live/`, written atomically, removed on close, ignored once its owner is gone.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { tryParseJson } from '../../core/json.js';
import { bootId, processAlive, processStartTime } from '../process/identity.js';

const OwnerSchema = z.object({ pid: z.number().int(), start: z.string(), boot: z.string() });
type Owner = z.infer<typeof OwnerSchema>;

const LiveFileSchema = z.object({
  owner: OwnerSchema,
  kind: z.string(),
  updated_at: z.string(),
  servers: z.record(z.string(), z.looseObject({ uuid: z.string().nullable(), runtime_info: z.looseObject({ status: z.string() }) })),
});
export type LiveFile = z.infer<typeof LiveFileSchema>;
export type LiveServer = LiveFile['servers'][string] & { owner_pid: number; owner_kind: string; updated_at: string };

export function liveDir(dataDir: string): string {
  return path.join(dataDir, 'mcp', 'live');
}

function selfOwner(): Owner {
  return { pid: process.pid, start: processStartTime(process.pid) ?? 'unknown', boot: bootId() };
}

/** True while the process that wrote a live file still runs (same pid, start time and boot). */
function ownerAlive(owner: Owner): boolean {
  if (owner.boot !== bootId()) return false;
  if (owner.start === 'unknown') return processAlive(owner.pid);
  return processStartTime(owner.pid) === owner.start;
}

/** The writer side: one file for this process. */
export class LiveStateWriter {
  readonly #file: string;
  readonly #owner = selfOwner();
  #closed = false;

  constructor(
    readonly dataDir: string,
    readonly kind: string,
  ) {
    this.#file = path.join(liveDir(dataDir), `${process.pid}.json`);
  }

  write(servers: LiveFile['servers']): void {
    if (this.#closed) return;
    const body: LiveFile = { owner: this.#owner, kind: this.kind, updated_at: new Date().toISOString(), servers };
    mkdirSync(path.dirname(this.#file), { recursive: true, mode: 0o700 });
    const tmp = `${this.#file}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(body)}\n`, { mode: 0o600 });
    renameSync(tmp, this.#file);
  }

  close(): void {
    this.#closed = true;
    rmSync(this.#file, { force: true });
  }
}

/** Reads the live sessions of every running host; per server the most recently updated entry wins. */
export function readLiveServers(dataDir: string): Map<string, LiveServer> {
  const dir = liveDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return new Map();
  }
  const out = new Map<string, LiveServer>();
  for (const name of names) {
    const file = path.join(dir, name);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const parsed = LiveFileSchema.safeParse(tryParseJson(text));
    if (!parsed.success) continue;
    if (!ownerAlive(parsed.data.owner)) {
      rmSync(file, { force: true });
      continue;
    }
    for (const [server, entry] of Object.entries(parsed.data.servers)) {
      const prev = out.get(server);
      // A serve process is the long-lived host; it wins over a one-shot `lbot run`.
      const better =
        !prev ||
        (prev.owner_kind !== 'serve' && parsed.data.kind === 'serve') ||
        (prev.owner_kind === parsed.data.kind && prev.updated_at < parsed.data.updated_at);
      if (better) out.set(server, { ...entry, owner_pid: parsed.data.owner.pid, owner_kind: parsed.data.kind, updated_at: parsed.data.updated_at });
    }
  }
  return out;
}
