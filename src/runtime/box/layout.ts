// Where box state lives under the data dir (box.md §5.1): session records, locks, sockets, backend dirs.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { ensureSocketDir, tmpSocketDir } from '../socket-dir.js';

/** Unix socket paths must fit in sockaddr_un (108 bytes including the NUL). */
const MAX_SOCKET_PATH = 100;

export class BoxLayout {
  readonly root: string;

  constructor(readonly dataDir: string) {
    this.root = path.join(dataDir, 'box');
  }

  get sessionsDir(): string {
    return path.join(this.root, 'sessions');
  }
  sessionDir(id: string): string {
    return path.join(this.sessionsDir, id);
  }
  recordFile(id: string): string {
    return path.join(this.sessionDir(id), 'record.json');
  }
  pendingFile(id: string): string {
    return path.join(this.sessionDir(id), 'pending');
  }
  tokenFile(id: string): string {
    return path.join(this.sessionDir(id), 'token');
  }
  /** Bound read-only into the sandbox: last-use and busy markers only, never secrets. */
  sharedDir(id: string): string {
    return path.join(this.sessionDir(id), 'shared');
  }
  lastUsedFile(id: string): string {
    return path.join(this.sharedDir(id), 'last_used');
  }
  busyFile(id: string, processId: string): string {
    return path.join(this.sharedDir(id), `busy-${processId}`);
  }
  processesDir(id: string): string {
    return path.join(this.sessionDir(id), 'procs');
  }
  processDir(id: string, processId: string): string {
    return path.join(this.processesDir(id), processId);
  }
  get locksDir(): string {
    return path.join(this.root, 'locks');
  }
  sessionLock(id: string): string {
    return path.join(this.locksDir, `${id}.lock`);
  }
  /** Held for the whole of one exec or process start/stop: a session runs one command at a time. */
  execLock(id: string): string {
    return path.join(this.locksDir, `${id}.exec.lock`);
  }
  get globalLock(): string {
    return path.join(this.locksDir, 'global.lock');
  }
  get errorsFile(): string {
    return path.join(this.root, 'errors.json');
  }
  get bwrapDir(): string {
    return path.join(this.root, 'bwrap');
  }
  get hostDir(): string {
    return path.join(this.root, 'host');
  }

  /**
   * A private, short unix socket path for one managed process: under the data dir when it fits in
   * sockaddr_un, else under `<tmp>/lbot-<uid>`. Either dir is created 0700 or, when present, must be a
   * real directory of this user with no group/other access; otherwise `box.unavailable`.
   */
  socketPath(sessionId: string, processId: string): string {
    const hash = createHash('sha256').update(`${this.root}\n${sessionId}\n${processId}`).digest('hex').slice(0, 20);
    const local = path.join(this.root, 'run');
    const fits = path.join(local, `${hash}.sock`).length <= MAX_SOCKET_PATH;
    const dir = ensureSocketDir(fits ? local : tmpSocketDir(), 'box.unavailable', { parents: fits });
    return path.join(dir, `${hash}.sock`);
  }
}
