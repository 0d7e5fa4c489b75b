// A loopback model server speaking Anthropic's Messages wire (streamed
// SSE), as zr-cli's tests' loopback server does.
import { createServer } from 'node:http';

export function sse(text, tools = []) {
  const events = [
    { type: 'message_start', message: { id: 'msg', type: 'message', role: 'assistant', content: [], model: 'claude-test', stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } },
  ];
  let index = 0;
  if (text != null) {
    events.push(
      { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
      { type: 'content_block_stop', index },
    );
    index += 1;
  }
  for (const [id, name, input] of tools) {
    events.push(
      { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
      { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } },
      { type: 'content_block_stop', index },
    );
    index += 1;
  }
  events.push(
    { type: 'message_delta', delta: { stop_reason: tools.length ? 'tool_use' : 'end_turn' }, usage: { output_tokens: 5 } },
    { type: 'message_stop' },
  );
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
}

/** A model answering `answer(body) -> [text, tools]`; `requests` holds the bodies. */
export async function model(answer) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const parsed = JSON.parse(body);
      requests.push(parsed);
      const [text, tools] = answer(parsed);
      const payload = sse(text, tools);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': Buffer.byteLength(payload), connection: 'close' });
      res.end(payload);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const url = `http://127.0.0.1:${server.address().port}`;
  return { requests, env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: url }, close: () => server.close() };
}

export const system = (body) => JSON.stringify(body.system);
export const turns = (body) => (body.messages ?? []).length;
