// lbot's OAuth client for remote MCP servers, on the SDK's own client auth (`auth()` does discovery,
// registration, PKCE, the resource parameter, token endpoint auth and refresh). This file only decides
// where state lives (oauth-store.ts) and who may start a browser flow: `lbot mcp login` may; every
// other command and `lbot serve` refuse with mcp.auth_required naming the command to run.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { extractWWWAuthenticateParams, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LbotError } from '../../core/errors.js';
import { LBOT_VERSION } from '../../package-root.js';
import type { McpServerRecord } from './config.js';
import { OAuthStore, type OAuthTokens } from './oauth-store.js';

/** Placeholder redirect of background sessions: they never send a user to the authorization server. */
const BACKGROUND_REDIRECT = 'http://127.0.0.1/callback';

export type OAuthMode =
  /** Commands and serve: use and refresh stored tokens; a needed browser flow is mcp.auth_required. */
  | { kind: 'background' }
  /** `lbot mcp login`: the user is sent to `url`; the code comes back to `redirectUrl`. */
  | { kind: 'login'; redirectUrl: string; state: string; sendUser(url: URL): Promise<void> };

export function authRequired(name: string, why: string): LbotError {
  return new LbotError('mcp.auth_required', `MCP server ${name} requires authorization: ${why}`, {
    details: { name, command: `lbot mcp login ${name}` },
    hint: `run lbot mcp login ${name}`,
  });
}

function spaced(scope: string | undefined): string[] {
  return scope ? scope.split(/\s+/).filter(Boolean) : [];
}

/** The union of two space-separated scope lists, in first-seen order. */
export function unionScopes(...scopes: Array<string | undefined | null>): string | undefined {
  const all = [...new Set(scopes.flatMap((s) => spaced(s ?? undefined)))];
  return all.length > 0 ? all.join(' ') : undefined;
}

/** The SDK's machine-to-machine providers for `grant: client_credentials` (their tokens are kept in the store). */
function machineProvider(record: McpServerRecord): OAuthClientProvider | null {
  const o = record.oauth;
  if (o.grant !== 'client_credentials') return null;
  if (!o.client_id) throw new LbotError('mcp.invalid_config', `MCP server ${record.name}: oauth.grant client_credentials needs oauth.client_id`);
  const scope = o.scope ?? undefined;
  if (o.private_key_file) {
    let privateKey: string;
    try {
      privateKey = readFileSync(o.private_key_file, 'utf8');
    } catch (err) {
      throw new LbotError(
        'mcp.invalid_config',
        `MCP server ${record.name}: cannot read oauth.private_key_file ${o.private_key_file}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    return new PrivateKeyJwtProvider({ clientId: o.client_id, privateKey, algorithm: o.signing_alg, clientName: 'lbot', ...(scope ? { scope } : {}) });
  }
  if (!o.client_secret)
    throw new LbotError('mcp.invalid_config', `MCP server ${record.name}: oauth.grant client_credentials needs oauth.client_secret or oauth.private_key_file`);
  return new ClientCredentialsProvider({ clientId: o.client_id, clientSecret: o.client_secret, clientName: 'lbot', ...(scope ? { scope } : {}) });
}

export class LbotOAuthProvider implements OAuthClientProvider {
  readonly store: OAuthStore;
  readonly #record: McpServerRecord;
  readonly #mode: OAuthMode;
  readonly #machine: OAuthClientProvider | null;
  #codeVerifier: string | null = null;
  #fresh: OAuthTokens | undefined;
  readonly addClientAuthentication?: OAuthClientProvider['addClientAuthentication'];
  readonly prepareTokenRequest?: OAuthClientProvider['prepareTokenRequest'];

  constructor(record: McpServerRecord, store: OAuthStore, mode: OAuthMode) {
    this.#record = record;
    this.store = store;
    this.#mode = mode;
    this.#machine = machineProvider(record);
    const machine = this.#machine;
    if (machine?.addClientAuthentication) this.addClientAuthentication = machine.addClientAuthentication;
    if (machine?.prepareTokenRequest) this.prepareTokenRequest = (scope) => machine.prepareTokenRequest?.(scope);
  }

  get redirectUrl(): string | undefined {
    if (this.#machine) return undefined;
    return this.#mode.kind === 'login' ? this.#mode.redirectUrl : (this.store.clientInformation()?.redirect_uris[0] ?? BACKGROUND_REDIRECT);
  }

  get clientMetadataUrl(): string | undefined {
    return this.#record.oauth.client_metadata_url ?? undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    if (this.#machine) return this.#machine.clientMetadata;
    return {
      client_name: 'lbot',
      client_uri: 'https://github.com/langbot-app',
      software_id: 'lbot',
      software_version: LBOT_VERSION,
      redirect_uris: [this.redirectUrl ?? BACKGROUND_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.#record.oauth.client_secret ? 'client_secret_basic' : 'none',
      ...(this.#record.oauth.scope ? { scope: this.#record.oauth.scope } : {}),
    };
  }

  state(): string {
    return this.#mode.kind === 'login' ? this.#mode.state : randomBytes(16).toString('base64url');
  }

  clientInformation(): OAuthClientInformationMixed | undefined | Promise<OAuthClientInformationMixed | undefined> {
    if (this.#machine) return this.#machine.clientInformation();
    const o = this.#record.oauth;
    if (o.client_id) return { client_id: o.client_id, ...(o.client_secret ? { client_secret: o.client_secret } : {}) };
    const stored = this.store.clientInformation();
    // Without a registration there is no token either; asking here keeps a background session from
    // registering a client with the authorization server (only `lbot mcp login` does, once).
    if (!stored && this.#mode.kind === 'background') throw authRequired(this.#record.name, 'lbot is not registered with its authorization server yet');
    return stored;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    // Configured clients stay as configured; only a registration (or a metadata-document id) is stored.
    if (this.#machine || this.#record.oauth.client_id) return;
    // A background session does not register: the login that follows does, with its real redirect URI.
    if (this.#mode.kind === 'background') throw authRequired(this.#record.name, 'lbot is not registered with its authorization server yet');
    this.store.update((s) => ({ ...s, client_information: info }));
  }

  tokens(): OAuthTokens | undefined {
    // A login asks anew: the stored tokens (which auth() would just refresh) are replaced, not reused.
    return this.#mode.kind === 'login' ? this.#fresh : this.store.tokens();
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#fresh = tokens;
    this.store.update((s) => ({ ...s, tokens, tokens_saved_at: Date.now() }));
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.#mode.kind === 'background') throw authRequired(this.#record.name, 'no valid token is stored (or it can no longer be refreshed)');
    await this.#mode.sendUser(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#codeVerifier = verifier;
  }

  codeVerifier(): string {
    if (this.#codeVerifier === null)
      throw new LbotError('mcp.auth_failed', `MCP server ${this.#record.name}: no authorization flow was started in this process`);
    return this.#codeVerifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'verifier' || scope === 'all') this.#codeVerifier = null;
    if (scope === 'discovery') return;
    this.store.update((s) => ({
      url: s.url,
      ...(scope === 'tokens' && s.client_information !== undefined ? { client_information: s.client_information } : {}),
      ...(scope === 'client' && s.tokens !== undefined ? { tokens: s.tokens, tokens_saved_at: s.tokens_saved_at } : {}),
      ...(s.challenge ? { challenge: s.challenge } : {}),
      ...(s.granted_scope ? { granted_scope: s.granted_scope } : {}),
    }));
  }
}

/**
 * Wraps fetch to remember the server's last 401/403 challenge (RFC 6750 `WWW-Authenticate`): a later
 * `lbot mcp login` asks for the scope a step-up demanded, and a scope that was granted and is still
 * refused is reported as mcp.auth_failed instead of asking the user to log in again forever.
 */
export function recordChallenges(store: OAuthStore, serverUrl: string, next: FetchLike = fetch): FetchLike {
  const origin = new URL(serverUrl).origin;
  return async (input, init) => {
    const res = await next(input, init);
    if ((res.status === 401 || res.status === 403) && new URL(String(input instanceof Request ? input.url : input)).origin === origin) {
      const { resourceMetadataUrl, scope, error } = extractWWWAuthenticateParams(res);
      const insufficient = res.status === 403 && error === 'insufficient_scope';
      if (res.status === 401 || insufficient) {
        const resource_metadata_url = resourceMetadataUrl?.href;
        store.update((s) => ({
          ...s,
          challenge: { ...(resource_metadata_url ? { resource_metadata_url } : {}), ...(scope ? { scope } : {}), insufficient_scope: insufficient },
        }));
      }
    }
    return res;
  };
}

/** The scope a step-up asks for that the last login did not get; undefined when there is none. */
export function missingScope(store: OAuthStore): { wanted: string; missing: string[] } | undefined {
  const s = store.read();
  if (!s.challenge?.insufficient_scope || !s.challenge.scope) return undefined;
  const granted = new Set(spaced(s.granted_scope));
  return { wanted: s.challenge.scope, missing: spaced(s.challenge.scope).filter((x) => !granted.has(x)) };
}
