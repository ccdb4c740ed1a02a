// Where the OAuth state of one remote MCP server lives: `<data-dir>/mcp/oauth/<name>.json`, 0600 in a
// 0700 directory, replaced atomically. Every read goes to disk, so a token that one lbot process
// obtained or refreshed is what the next process (or a running `lbot serve`) uses.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { OAuthClientInformationFullSchema, OAuthTokensSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { tryParseJson } from '../../core/json.js';
import { ensurePrivateDir, writePrivateFile } from '../../core/stores/private-files.js';

const StoredSchema = z.object({
  /** The server URL the state belongs to: a changed URL starts over. */
  url: z.string(),
  client_information: z.unknown().optional(),
  tokens: z.unknown().optional(),
  /** When the tokens were saved (epoch ms), to tell an expired access token. */
  tokens_saved_at: z.number().optional(),
  /** The scope the last login asked for and was granted. */
  granted_scope: z.string().optional(),
  /** The last 401/403 challenge of the server: where its metadata is and which scope it asked for. */
  challenge: z.object({ resource_metadata_url: z.string().optional(), scope: z.string().optional(), insufficient_scope: z.boolean() }).optional(),
});
export type StoredOAuth = z.infer<typeof StoredSchema>;
export type OAuthTokens = z.infer<typeof OAuthTokensSchema>;
export type OAuthClientInformation = z.infer<typeof OAuthClientInformationFullSchema>;

export class OAuthStore {
  readonly file: string;
  readonly #url: string;

  constructor(dataDir: string, name: string, url: string) {
    this.file = path.join(dataDir, 'mcp', 'oauth', `${name}.json`);
    this.#url = url;
  }

  /** The stored state of this server URL (empty when missing, unreadable or for another URL). */
  read(): StoredOAuth {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return { url: this.#url };
    }
    const parsed = StoredSchema.safeParse(tryParseJson(text));
    return parsed.success && parsed.data.url === this.#url ? parsed.data : { url: this.#url };
  }

  update(change: (state: StoredOAuth) => StoredOAuth): void {
    const next = change(this.read());
    ensurePrivateDir(path.dirname(this.file));
    writePrivateFile(this.file, `${JSON.stringify(next, null, 1)}\n`);
  }

  tokens(): OAuthTokens | undefined {
    const parsed = OAuthTokensSchema.safeParse(this.read().tokens);
    return parsed.success ? parsed.data : undefined;
  }

  clientInformation(): OAuthClientInformation | undefined {
    const parsed = OAuthClientInformationFullSchema.safeParse(this.read().client_information);
    return parsed.success ? parsed.data : undefined;
  }

  /** True when the stored access token is past its lifetime (with 30 s to spare). */
  expired(now = Date.now()): boolean {
    const state = this.read();
    const tokens = this.tokens();
    if (!tokens?.expires_in || state.tokens_saved_at === undefined) return false;
    return state.tokens_saved_at + tokens.expires_in * 1000 - 30_000 <= now;
  }

  /** `lbot mcp logout`: forgets tokens, registration and challenge. */
  remove(): boolean {
    const existed = this.read().tokens !== undefined || this.read().client_information !== undefined;
    rmSync(this.file, { force: true });
    return existed;
  }
}
