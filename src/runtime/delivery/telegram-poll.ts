// `lbot serve --telegram-poll`: getUpdates long polling per Telegram account, the offset kept in the
// store after each update is handed to a run, so a restart neither loses nor repeats an update.
import { accountApiBase, accountBotId, accountToken, type PlatformAccount } from '../../core/delivery/accounts.js';
import { getUpdatesBody, LONG_POLL_TIMEOUT_S, readUpdates } from '../../core/delivery/telegram-updates.js';
import { LbotError } from '../../core/errors.js';
import { normalizePlatformPayload } from '../../core/gateway/index.js';
import type { EventEnvelope } from '../../core/protocol/event.js';
import type { HostStores } from '../stores/open.js';
import { exchange } from './http.js';

/** Between two polls that returned at once with nothing (a server that does not hold the request). */
const MIN_EMPTY_POLL_MS = 500;
const MAX_BACKOFF_MS = 30_000;

export type TelegramPollerOptions = {
  account: PlatformAccount;
  stores: HostStores;
  env: NodeJS.ProcessEnv;
  /** Parses and starts the run of one envelope (throws the coded refusal). */
  route(envelope: unknown, raw: unknown): Promise<string>;
  warn(message: string): void;
  log?(line: string): void;
};

export class TelegramPoller {
  #closed = false;
  #loop: Promise<void> | null = null;
  readonly #abort = new AbortController();

  constructor(private readonly o: TelegramPollerOptions) {}

  start(): void {
    // Fails serve at start on a missing token instead of warning forever.
    accountToken(this.o.account, this.o.env);
    this.#loop ??= this.#run();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#abort.abort();
    await this.#loop;
  }

  async #sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.#abort.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          resolve();
        },
        { once: true },
      );
    });
  }

  async #run(): Promise<void> {
    const a = this.o.account;
    let failures = 0;
    while (!this.#closed) {
      const started = Date.now();
      const offset = this.o.stores.delivery.pollOffset(a.name);
      let answer;
      try {
        const token = accountToken(a, this.o.env) ?? '';
        const res = await exchange(
          { method: 'POST', url: `${accountApiBase(a)}/bot${token}/getUpdates`, headers: { 'content-type': 'application/json' }, body: getUpdatesBody(offset) },
          (LONG_POLL_TIMEOUT_S + 10) * 1000,
          this.#abort.signal,
        );
        answer = readUpdates(res.status, res.json);
      } catch (err) {
        if (this.#closed) return;
        failures += 1;
        const token = a.token_env ? this.o.env[a.token_env] : undefined;
        const why = err instanceof Error ? err.message : String(err);
        this.o.warn(`telegram poll (${a.name}): ${token ? why.split(token).join('****') : why}; retrying`);
        await this.#sleep(Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(failures - 1, 5)));
        continue;
      }
      if (answer.kind === 'error') {
        failures += 1;
        // 409: a webhook is set, or another poller uses this token; 401/404: the token is wrong.
        this.o.warn(`telegram poll (${a.name}): getUpdates answered ${answer.code} ${answer.description}`);
        await this.#sleep(
          answer.retry_after_s !== null ? Math.min(3600, answer.retry_after_s) * 1000 : Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(failures - 1, 5)),
        );
        continue;
      }
      failures = 0;
      for (const { update_id, update } of answer.updates) {
        if (this.#closed) return;
        if (offset !== null && update_id < offset) continue;
        const handed = await this.#handle(update);
        // Not handed over (lbot is at its run limit): keep the offset so the update comes again.
        if (!handed) break;
        this.o.stores.delivery.setPollOffset(a.name, update_id + 1, Date.now() / 1000);
      }
      if (answer.updates.length === 0 && Date.now() - started < MIN_EMPTY_POLL_MS) await this.#sleep(MIN_EMPTY_POLL_MS);
    }
  }

  /** True once the update is dealt with (a run started, ignored, refused for good); false to see it again. */
  async #handle(update: unknown): Promise<boolean> {
    const a = this.o.account;
    let envelope: EventEnvelope;
    try {
      const result = normalizePlatformPayload('telegram', update, { receivedAt: Math.floor(Date.now() / 1000), botId: accountBotId(a) });
      if (result.kind !== 'event') return true;
      envelope = result.envelope;
      // Handed to a run before a crash that lost the offset: the event log has it, it is not run twice.
      if ((await this.o.stores.events.findByEventId(envelope.event_id)).length > 0) return true;
      const runId = await this.o.route(envelope, result.raw);
      this.o.log?.(`telegram poll (${a.name}): ${envelope.event_type} → run ${runId}`);
      return true;
    } catch (err) {
      if (err instanceof LbotError && err.retryable) {
        await this.#sleep(1000);
        return false;
      }
      this.o.warn(`telegram poll (${a.name}): update skipped: ${err instanceof Error ? err.message : String(err)}`);
      return true;
    }
  }
}
