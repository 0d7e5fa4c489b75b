// An MCP server on the legacy HTTP+SSE transport, built from the official
// TypeScript SDK's `SSEServerTransport` (the transport Claude Code's
// `"type": "sse"` entries speak), for zr's SSE client tests.
//
//   node sse_server.mjs SDK_DIR
//
// SDK_DIR is the SDK's `dist/esm` folder. It listens on a free loopback
// port and prints its stream URL (http://127.0.0.1:PORT/sse) as the first
// line on stdout. GET /sse opens a session; POST /messages?sessionId=...
// carries the client's messages. Every request's `x-zr-test` header is
// kept, and the `headers` tool answers with those seen, so a test can see
// that zr sent its configured headers on the stream and on each post.
// Tools: `echo` ({message}) answers "Echo: MESSAGE"; `headers` as above.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [sdk] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(`${sdk}/${path}`).href);
const { McpServer } = await load('server/mcp.js');
const { SSEServerTransport } = await load('server/sse.js');
const { z } = createRequire(`${sdk}/index.js`)('zod');

const seen = [];
const sessions = new Map();

function server() {
  const mcp = new McpServer({ name: 'zr-sse-test', version: '1.0.0' });
  mcp.registerTool(
    'echo',
    { description: 'Echoes the message back.', inputSchema: { message: z.string() } },
    async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }),
  );
  mcp.registerTool('headers', { description: 'The x-zr-test headers seen.' }, async () => ({
    content: [{ type: 'text', text: seen.join(',') }],
  }));
  return mcp;
}

const http = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  seen.push(`${req.method} ${req.headers['x-zr-test'] ?? '-'}`);
  if (req.method === 'GET' && url.pathname === '/sse') {
    const transport = new SSEServerTransport('/messages', res);
    sessions.set(transport.sessionId, transport);
    res.on('close', () => sessions.delete(transport.sessionId));
    await server().connect(transport);
    return;
  }
  if (req.method === 'POST' && url.pathname === '/messages') {
    const transport = sessions.get(url.searchParams.get('sessionId'));
    if (!transport) {
      res.writeHead(404).end('no such session');
      return;
    }
    await transport.handlePostMessage(req, res);
    return;
  }
  res.writeHead(404).end();
});

http.listen(0, '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${http.address().port}/sse`);
});
