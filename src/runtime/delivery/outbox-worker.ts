// Sends the outbox: claims due rows, sends each once per attempt, retries with backoff honouring the
// platform's rate-limit answers, and resumes rows a crashed lbot left half-sent (docs/delivery.md).
import { accountApiBase, accountSigningSecret, accountToken, type PlatformAccount } from '../../core/delivery/accounts.js';
import { larkTokenRequest, readLarkToken, SENDERS, type Outcome } from '../../core/delivery/outbound/index.js';
import { platformError } from '../../core/delivery/outbound/answers.js';
import { LbotError } from '../../core/errors.js';
import type { DeliveryStore, OutboxError, OutboxRecord } from '../../core/stores/delivery-types.js';
import { processAlive } from '../process/identity.js';
import { OWNER } from '../run-owner.js';
import { exchange } from './http.js';

export const MAX_ATTEMPTS = 8;
/** Backoff without a platform hint: 1 s, 2 s, 4 s … capped. */
export const MAX_BACKOFF_S = 300;
/** A platform's retry_after is honoured up to this (a hostile or broken answer cannot park a row for days). */
export const MAX_RETRY_AFTER_S = 3600;
/** How often the worker looks for rows it was not told about (`lbot outbox retry`, another process). */
const IDLE_POLL_MS = 1000;

export function backoffSeconds(attempts: number): number {
  return Math.min(MAX_BACKOFF_S, 2 ** Math.max(0, attempts - 1));
}

export type OutboxWorkerOptions = {
  store: DeliveryStore;
  accounts(): readonly PlatformAccount[];
  env: NodeJS.ProcessEnv;
  warn(message: string): void;
  log?(line: string): void;
  nowMs?(): number;
};

/** A row's owner is gone when it is a process of this machine that no longer runs (never this one). */
const ownerGone = (o: { pid: number; host: string }) => o.host === OWNER.host && o.pid !== OWNER.pid && !processAlive(o.pid);

export class OutboxWorker {
  #closed = false;
  #wake: (() => void) | null = null;
  #loop: Promise<void> | null = null;
  readonly #larkTokens = new Map<string, { token: string; until: number }>();
  readonly #now: () => number;

  constructor(private readonly o: OutboxWorkerOptions) {
    this.#now = o.nowMs ?? (() => Date.now());
  }

  start(): void {
    const resumed = this.o.store.releaseAbandoned(ownerGone, this.#now() / 1000);
    if (resumed > 0) this.o.warn(`outbox: resuming ${resumed} message(s) a previous lbot process left unsent`);
    this.#loop ??= this.#run();
  }

  /** New rows were recorded: look now instead of at the next poll. */
  kick(): void {
    this.#wake?.();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.kick();
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      let due: OutboxRecord[] = [];
      try {
        due = this.o.store.claimDue(OWNER, this.#now() / 1000, 16);
      } catch (err) {
        this.o.warn(`outbox: cannot read the outbox: ${err instanceof Error ? err.message : String(err)}`);
      }
      // One at a time, in order: edits of a streamed message must not overtake each other.
      for (const item of due) await this.#deliver(item);
      if (due.length > 0) continue;
      const next = this.#safeNextDue();
      const waitMs = next === null ? IDLE_POLL_MS : Math.min(IDLE_POLL_MS, Math.max(0, next * 1000 - this.#now()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  #safeNextDue(): number | null {
    try {
      return this.o.store.nextDueAt();
    } catch {
      return null;
    }
  }

  async #deliver(item: OutboxRecord): Promise<void> {
    const account = this.o.accounts().find((a) => a.name === item.account);
    const nowS = () => this.#now() / 1000;
    let outcome: Outcome;
    try {
      if (!account) throw new LbotError('config.invalid', `platform account ${item.account} is no longer configured`);
      outcome = await this.#attempt(account, item);
      if (outcome.kind === 'reauth') {
        this.#larkTokens.delete(account.name);
        outcome = await this.#attempt(account, item);
        if (outcome.kind === 'reauth') outcome = { kind: 'failed', error: outcome.error };
      }
    } catch (err) {
      outcome = this.#errorOutcome(err, account);
    }
    this.o.log?.(`outbox ${item.id} (${item.platform} ${item.op}) attempt ${item.attempts}: ${outcome.kind}`);
    if (outcome.kind === 'delivered') return this.o.store.markDelivered(item.id, outcome.message_id, nowS());
    const error = outcome.error;
    if (outcome.kind === 'retry' && item.attempts < MAX_ATTEMPTS) {
      const wait = error.retry_after_s !== null ? Math.min(MAX_RETRY_AFTER_S, Math.max(0, error.retry_after_s)) : backoffSeconds(item.attempts);
      return this.o.store.markRetry(item.id, error, nowS() + wait, nowS());
    }
    this.o.warn(`outbox: ${item.platform} message ${item.id} failed after ${item.attempts} attempt(s): ${error.code}: ${error.message}`);
    this.o.store.markFailed(item.id, error, nowS());
  }

  async #attempt(account: PlatformAccount, item: OutboxRecord): Promise<Outcome> {
    const sender = SENDERS[account.platform];
    const base = accountApiBase(account);
    const token = account.platform === 'lark' ? await this.#larkToken(account, base) : accountSigningSecret(account, this.o.env);
    const answer = await exchange(sender.request({ base, token, item, nowS: this.#now() / 1000 }));
    return sender.read(answer);
  }

  /** Lark replies need a tenant access token, exchanged for the app id and secret and kept until it expires. */
  async #larkToken(account: PlatformAccount, base: string): Promise<string> {
    const cached = this.#larkTokens.get(account.name);
    if (cached && cached.until > this.#now()) return cached.token;
    const secret = accountToken(account, this.o.env);
    if (!account.app_id || !secret)
      throw new LbotError('config.invalid', `platform account ${account.name}: lark needs app_id and the app secret in token_env`);
    const req = larkTokenRequest(base, account.app_id, secret);
    const got = readLarkToken(await exchange({ method: 'POST', url: req.url, headers: { 'content-type': 'application/json; charset=utf-8' }, body: req.body }));
    if ('error' in got) throw new LbotError('unauthorized', `lark tenant access token refused: ${got.error}`, { retryable: true });
    // Renewed a few minutes early, as Lark advises.
    this.#larkTokens.set(account.name, { token: got.token, until: this.#now() + Math.max(0, got.expire_s - 300) * 1000 });
    return got.token;
  }

  /** What a thrown error means for the row: refusals fail it, network trouble retries it; no token in the text. */
  #errorOutcome(err: unknown, account: PlatformAccount | undefined): { kind: 'retry' | 'failed'; error: OutboxError } {
    if (err instanceof LbotError) {
      const kind = err.retryable ? 'retry' : 'failed';
      return { kind, error: platformError(err.code, err.message, null) };
    }
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : null;
    const code =
      cause && 'code' in cause && typeof cause.code === 'string'
        ? cause.code
        : err instanceof Error && err.name === 'TimeoutError'
          ? 'timeout'
          : 'network_error';
    let message = err instanceof Error ? `${err.message}${cause ? `: ${cause.message}` : ''}` : String(err);
    for (const name of [account?.token_env, account?.callback_secret_env]) {
      const secret = name ? this.o.env[name] : undefined;
      if (secret) message = message.split(secret).join('****');
    }
    return { kind: 'retry', error: platformError(code, message, null) };
  }
}
