// An MCP server behind OAuth for zr's `zr mcp login` tests, built from the
// official TypeScript SDK's own authorization server (`mcpAuthRouter`:
// metadata, dynamic registration, /authorize, /token with PKCE S256) and
// resource server (`mcpAuthMetadataRouter`, `requireBearerAuth`), each on
// its own loopback port.
//
//   node oauth_server.mjs SDK_DIR TOKENS_FILE TTL_SECONDS
//
// SDK_DIR is the SDK's `dist/esm` folder. Every access and refresh token
// issued is appended to TOKENS_FILE ("access T", "refresh T", and
// "refreshed T" for a refresh grant) so that the test can look for them in
// zr's output. Access tokens expire after TTL_SECONDS. The first line on
// stdout is {"mcp": URL, "issuer": URL}. The one tool, `whoami`, answers
// with the client id the token was issued to.
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [sdk, tokensFile, ttlText] = process.argv.slice(2);
const ttl = Number(ttlText || '3600');
const load = (path) => import(pathToFileURL(`${sdk}/${path}`).href);
const express = createRequire(`${sdk}/index.js`)('express');

const { mcpAuthRouter, mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } =
  await load('server/auth/router.js');
const { requireBearerAuth } = await load('server/auth/middleware/bearerAuth.js');
const { InvalidGrantError } = await load('server/auth/errors.js');
const { DemoInMemoryAuthProvider } = await load('examples/server/demoInMemoryOAuthProvider.js');
const { McpServer } = await load('server/mcp.js');
const { StreamableHTTPServerTransport } = await load('server/streamableHttp.js');

const record = (kind, token) => appendFileSync(tokensFile, `${kind} ${token}\n`);

class Provider extends DemoInMemoryAuthProvider {
  constructor(validateResource) {
    super(validateResource);
    this.refreshTokens = new Map();
  }

  issue(clientId, scopes, resource) {
    const token = randomUUID();
    this.tokens.set(token, {
      token, clientId, scopes, resource, type: 'access',
      expiresAt: Date.now() + ttl * 1000,
    });
    record('access', token);
    return token;
  }

  async exchangeAuthorizationCode(client, code, verifier) {
    const granted = await super.exchangeAuthorizationCode(client, code, verifier);
    const data = this.tokens.get(granted.access_token);
    this.tokens.delete(granted.access_token);
    const access = this.issue(client.client_id, data.scopes, data.resource);
    const refresh = randomUUID();
    this.refreshTokens.set(refresh, { clientId: client.client_id, scopes: data.scopes, resource: data.resource });
    record('refresh', refresh);
    return { ...granted, access_token: access, expires_in: ttl, refresh_token: refresh };
  }

  async exchangeRefreshToken(client, refreshToken) {
    const grant = this.refreshTokens.get(refreshToken);
    if (!grant || grant.clientId !== client.client_id) {
      throw new InvalidGrantError('unknown refresh token');
    }
    const access = this.issue(client.client_id, grant.scopes, grant.resource);
    record('refreshed', access);
    return {
      access_token: access, token_type: 'bearer', expires_in: ttl,
      scope: grant.scopes.join(' '), refresh_token: refreshToken,
    };
  }
}

const listen = (app) => new Promise((resolve) => {
  const server = app.listen(0, '127.0.0.1', () => resolve(server.address().port));
});

const authApp = express();
const mcpApp = express();
const authPort = await listen(authApp);
const mcpPort = await listen(mcpApp);
const issuer = new URL(`http://127.0.0.1:${authPort}/`);
const mcpUrl = new URL(`http://127.0.0.1:${mcpPort}/mcp`);

const provider = new Provider((resource) => resource?.toString() === mcpUrl.toString());
authApp.use(mcpAuthRouter({ provider, issuerUrl: issuer, scopesSupported: ['mcp:tools'] }));

const oauthMetadata = {
  issuer: issuer.href,
  authorization_endpoint: new URL('/authorize', issuer).href,
  token_endpoint: new URL('/token', issuer).href,
  registration_endpoint: new URL('/register', issuer).href,
  response_types_supported: ['code'],
  grant_types_supported: ['authorization_code', 'refresh_token'],
  code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['client_secret_post', 'none'],
  scopes_supported: ['mcp:tools'],
};
mcpApp.use(mcpAuthMetadataRouter({
  oauthMetadata, resourceServerUrl: mcpUrl, scopesSupported: ['mcp:tools'], resourceName: 'zr test',
}));
mcpApp.use(express.json());
mcpApp.post('/mcp', requireBearerAuth({
  verifier: provider,
  requiredScopes: ['mcp:tools'],
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
}), async (req, res) => {
  const server = new McpServer({ name: 'oauth-test', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Says which client the token was issued to' },
    async (extra) => ({ content: [{ type: 'text', text: `client ${extra.authInfo?.clientId}` }] }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});

console.log(JSON.stringify({ mcp: mcpUrl.href, issuer: issuer.href }));
