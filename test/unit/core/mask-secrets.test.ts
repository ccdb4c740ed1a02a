// Secret masking of config output: credentials are masked at any depth, token counts and names are not.
import { describe, expect, it } from 'vitest';
import { MASK, maskSecrets } from '../../../src/core/config.js';

describe('maskSecrets', () => {
  it('masks credentials at any depth and leaves token counts readable', () => {
    const masked = maskSecrets({
      models: [{ id: 'm', api_key: 'sk-live-123', max_tokens: 4096, context_window_tokens: 200000 }],
      mcp: { env: { API_TOKEN: 'tok', GITHUB_PAT_SECRET: 'x' }, sampling: { max_tokens: 512 } },
      oauth: { client_secret: 's', password: 'p', access_token: 'a', refresh_token: 'r' },
    });
    expect(masked).toEqual({
      models: [{ id: 'm', api_key: MASK, max_tokens: 4096, context_window_tokens: 200000 }],
      mcp: { env: { API_TOKEN: MASK, GITHUB_PAT_SECRET: MASK }, sampling: { max_tokens: 512 } },
      oauth: { client_secret: MASK, password: MASK, access_token: MASK, refresh_token: MASK },
    });
  });
});
