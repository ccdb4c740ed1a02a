// Durable box sessions: records under the data dir, get-or-create with the compatibility check, cap, drop, reap.
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { firstDifference } from '../../core/box/compat.js';
import { boxError } from '../../core/box/errors.js';
import type { BackendName, BoxSpec, SessionInfo } from '../../core/box/model.js';
import { readJson, touch, writeJsonAtomic, writeSecret } from './files.js';
import { withLock } from './lock.js';
import type { BoxLayout } from './layout.js';
import { isIdentityAlive } from '../process/identity.js';
import { SessionRecordSchema, type Owner, type SandboxBackend, type SessionRecord } from './backend.js';

export type SessionStoreOptions = {
  layout: BoxLayout;
  backend: (name: BackendName) => SandboxBackend;
  ttlSec: number;
  maxSessions: number;
  owner: Owner;
  /** Stops the session's managed processes before its sandbox goes away. */
  beforeDrop: (record: SessionRecord) => Promise<void>;
  /** Whether a session has running managed processes (exempts it from TTL reaping and mount recreation). */
  hasRunningProcesses: (sessionId: string) => boolean;
  warn: (message: string) => void;
};

const PENDING_STALE_MS = 120_000;

/**
 * The box.session_conflict of a session that exists on another backend than the request asks for
 * (`requested` is a backend name, or `auto` for any isolating one): the backend is part of a session's identity.
 */
export function backendConflict(id: string, stored: BackendName, requested: BackendName | 'auto') {
  const asked = requested === 'auto' ? 'an isolating backend (box.backend: auto)' : `the ${requested} backend`;
  const what = stored === 'host' ? 'the host backend, without any isolation' : `the ${stored} backend`;
  return boxError(
    'box.session_conflict',
    `box session ${id} already exists on ${what}, but this request asks for ${asked}; it is not reused. Use another --session, or remove it with lbot box rm ${id}`,
    { session_id: id, field: 'backend', stored, requested },
  );
}

export class SessionStore {
  readonly #o: SessionStoreOptions;

  constructor(opts: SessionStoreOptions) {
    this.#o = opts;
  }

  read(id: string): SessionRecord | null {
    return readJson(this.#o.layout.recordFile(id), SessionRecordSchema);
  }

  /** Last use: the mtime of the session's last-use marker (cheap to bump on every exec). */
  lastUsed(id: string, record: SessionRecord): Date {
    try {
      return statSync(this.#o.layout.lastUsedFile(id)).mtime;
    } catch {
      return new Date(record.info.last_used_at);
    }
  }

  touch(id: string): void {
    touch(this.#o.layout.lastUsedFile(id));
  }

  /** The session info with `last_used_at` from the marker. */
  info(record: SessionRecord): SessionInfo {
    return { ...record.info, last_used_at: this.lastUsed(record.info.session_id, record).toISOString() };
  }

  /** Ids of all sessions with a record (pending creations excluded). */
  ids(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.#o.layout.sessionsDir);
    } catch {
      return [];
    }
    return names.filter((n) => existsSync(this.#o.layout.recordFile(n)));
  }

  list(): SessionRecord[] {
    return this.ids()
      .map((id) => this.read(id))
      .filter((r): r is SessionRecord => r !== null);
  }

  async isAlive(record: SessionRecord): Promise<boolean> {
    try {
      return await this.#o.backend(record.info.backend_name).isSessionAlive(record);
    } catch {
      return false;
    }
  }

  /**
   * Returns the live session for `spec.session_id`, creating it when absent or dead. An existing
   * session with a different spec is a conflict (a change of extra mounts alone recreates it when no
   * managed process runs). Creation is single-flight per id and counted against the session cap.
   */
  async getOrCreate(
    spec: BoxSpec,
    backend: SandboxBackend,
    opts: { oneShot?: boolean; known?: SessionRecord | null } = {},
  ): Promise<{ record: SessionRecord; created: boolean }> {
    const id = spec.session_id;
    // Fast path without the lock: a live, compatible session only needs its last-use bumped.
    const known = opts.known === undefined ? this.read(id) : opts.known;
    if (known && known.info.backend_name === backend.name && !firstDifference(known.info, spec) && (await this.isAlive(known))) {
      this.touch(id);
      return { record: known, created: false };
    }
    return withLock(this.#o.layout.sessionLock(id), async () => {
      const existing = this.read(id);
      if (existing) {
        if (!(await this.isAlive(existing))) {
          this.#o.warn(`box session ${id} was no longer running; it is recreated`);
          await this.#dropUnlocked(existing);
        } else {
          if (existing.info.backend_name !== backend.name) throw backendConflict(id, existing.info.backend_name, backend.name);
          const diff = firstDifference(existing.info, spec);
          if (!diff) {
            this.touch(id);
            return { record: existing, created: false };
          }
          if (diff.field === 'extra_mounts' && !this.#o.hasRunningProcesses(id)) {
            await this.#dropUnlocked(existing);
          } else {
            throw boxError(
              'box.session_conflict',
              `box session ${id} already exists with ${diff.field}=${JSON.stringify(diff.stored)} (requested ${JSON.stringify(diff.requested)}); use another --session or remove it with lbot box rm ${id}`,
              { session_id: id, field: diff.field, stored: diff.stored, requested: diff.requested },
            );
          }
        }
      }
      await this.#reserve(id);
      try {
        const layout = this.#o.layout;
        mkdirSync(layout.sharedDir(id), { recursive: true, mode: 0o700 });
        writeSecret(layout.tokenFile(id), randomBytes(32).toString('hex'));
        this.touch(id);
        const started = await backend.startSession(spec, { sharedDir: layout.sharedDir(id), ttlSec: this.#o.ttlSec, key: id });
        const now = new Date().toISOString();
        const record: SessionRecord = {
          info: {
            session_id: id,
            backend_name: backend.name,
            backend_session_id: started.backend_session_id,
            image: spec.image,
            network: spec.network,
            host_path: spec.host_path,
            host_path_mode: spec.host_path_mode,
            mount_path: spec.mount_path,
            persistent: spec.persistent,
            cpus: spec.cpus,
            memory_mb: spec.memory_mb,
            pids_limit: spec.pids_limit,
            read_only_rootfs: spec.read_only_rootfs,
            workspace_quota_mb: spec.workspace_quota_mb,
            extra_mounts: spec.extra_mounts,
            created_at: now,
            last_used_at: now,
          },
          owner: this.#o.owner,
          one_shot: opts.oneShot ?? false,
          backend_state: started.state,
        };
        writeJsonAtomic(layout.recordFile(id), record);
        rmSync(layout.pendingFile(id), { force: true });
        return { record, created: true };
      } catch (err) {
        rmSync(this.#o.layout.sessionDir(id), { recursive: true, force: true });
        throw err;
      }
    });
  }

  /** Claims a slot under the global lock: counts live and pending sessions against the cap. */
  async #reserve(id: string): Promise<void> {
    const layout = this.#o.layout;
    await withLock(layout.globalLock, () => {
      let names: string[] = [];
      try {
        names = readdirSync(layout.sessionsDir);
      } catch {
        names = [];
      }
      const taken = names.filter((n) => n !== id && (existsSync(layout.recordFile(n)) || this.#pendingFresh(n)));
      if (taken.length >= this.#o.maxSessions) {
        throw boxError(
          'box.session_limit',
          `cannot create box session ${id}: the limit of ${this.#o.maxSessions} sessions is reached (box.max_sessions); remove one with lbot box rm`,
          { session_id: id, max_sessions: this.#o.maxSessions, sessions: taken.length },
        );
      }
      mkdirSync(layout.sessionDir(id), { recursive: true, mode: 0o700 });
      writeSecret(layout.pendingFile(id), String(process.pid));
    });
  }

  #pendingFresh(id: string): boolean {
    try {
      return Date.now() - statSync(this.#o.layout.pendingFile(id)).mtimeMs < PENDING_STALE_MS;
    } catch {
      return false;
    }
  }

  /** Removes a session: its managed processes, its sandbox, its record. Unknown id → box.session_not_found. */
  async remove(id: string): Promise<void> {
    await withLock(this.#o.layout.sessionLock(id), async () => {
      const record = this.read(id);
      if (!record) {
        if (existsSync(this.#o.layout.sessionDir(id)) && !this.#pendingFresh(id)) {
          rmSync(this.#o.layout.sessionDir(id), { recursive: true, force: true });
          return;
        }
        throw boxError('box.session_not_found', `box session ${id} not found; lbot box sessions lists the sessions`, { session_id: id });
      }
      await this.#dropUnlocked(record);
    });
  }

  /** Drops a session if it still exists and `when` (re-checked under the lock) holds; never throws. */
  async drop(id: string, when: (record: SessionRecord) => Promise<boolean> | boolean = () => true): Promise<boolean> {
    try {
      return await withLock(this.#o.layout.sessionLock(id), async () => {
        const record = this.read(id);
        if (!record || !(await when(record))) return false;
        await this.#dropUnlocked(record);
        return true;
      });
    } catch (err) {
      this.#o.warn(`could not remove box session ${id}: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    }
  }

  async #dropUnlocked(record: SessionRecord): Promise<void> {
    const id = record.info.session_id;
    try {
      await this.#o.beforeDrop(record);
    } catch (err) {
      this.#o.warn(`stopping the processes of box session ${id} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      await this.#o.backend(record.info.backend_name).stopSession(record);
    } catch (err) {
      this.#o.warn(`stopping the sandbox of box session ${id} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    rmSync(this.#o.layout.sessionDir(id), { recursive: true, force: true });
  }

  /** Whether a session is past its TTL: not persistent, idle longer than the TTL, no running process. */
  isExpired(record: SessionRecord, now = Date.now()): boolean {
    if (this.#o.ttlSec <= 0 || record.info.persistent) return false;
    if (this.#o.hasRunningProcesses(record.info.session_id)) return false;
    return now - this.lastUsed(record.info.session_id, record).getTime() > this.#o.ttlSec * 1000;
  }

  /** Removes expired sessions, dead sessions and sessions of `serve` instances that are gone. */
  async reapExpired(): Promise<string[]> {
    const removed: string[] = [];
    const doomed = async (record: SessionRecord) =>
      (record.owner.kind === 'serve' && !isIdentityAlive(record.owner)) || this.isExpired(record) || !(await this.isAlive(record));
    for (const record of this.list()) {
      if ((await doomed(record)) && (await this.drop(record.info.session_id, doomed))) removed.push(record.info.session_id);
    }
    this.#sweepStalePending();
    return removed;
  }

  #sweepStalePending(): void {
    let names: string[];
    try {
      names = readdirSync(this.#o.layout.sessionsDir);
    } catch {
      return;
    }
    for (const n of names) {
      if (!existsSync(this.#o.layout.recordFile(n)) && !this.#pendingFresh(n)) {
        try {
          if (Date.now() - statSync(this.#o.layout.sessionDir(n)).mtimeMs > PENDING_STALE_MS)
            rmSync(this.#o.layout.sessionDir(n), { recursive: true, force: true });
        } catch {
          // already gone
        }
      }
    }
  }
}
