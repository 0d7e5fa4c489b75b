// zr from Node.js: a thin client over `zr host` (the host protocol, JSON
// lines over the zr binary's stdio; schema/host-protocol.schema.json in
// the zr repository). The binary ships in this package (bin/zr).

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROTOCOL_VERSION = 1;

/** zr could not run the session; `message` is zr's own text. */
export class ZrError extends Error {
  constructor(message, exitCode) {
    super(message);
    this.name = 'ZrError';
    this.exitCode = exitCode;
  }
}

/**
 * A tool the model can call: `handler(input)` returns a string (or a
 * JSON-able value); a thrown error becomes an error result.
 */
export function tool(name, description, inputSchema, handler, { readOnly = false } = {}) {
  return { name, description, inputSchema, handler, readOnly };
}

function findBinary(options) {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [options.pathToZrExecutable, process.env.ZR_BINARY, join(here, 'bin', 'zr')]) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  return 'zr';
}

function matches(matcher, tool) {
  const text = (matcher ?? '').trim();
  if (tool === undefined || text === '' || text === '*') return true;
  if (/^[A-Za-z0-9_|-]+$/.test(text)) return text.split('|').includes(tool);
  return new RegExp(`^(?:${text})$`).test(tool);
}

function spec(options) {
  const out = {
    agents: {},
    tools: (options.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.inputSchema,
      read_only: Boolean(t.readOnly),
    })),
    can_use_tool: typeof options.canUseTool === 'function',
    hooks: [],
  };
  for (const [name, a] of Object.entries(options.agents ?? {})) {
    const agent = { description: a.description, prompt: a.prompt };
    if (a.tools) agent.tools = a.tools;
    if (a.disallowedTools) agent.disallowed_tools = a.disallowedTools;
    if (a.model) agent.model = a.model;
    if (a.maxTurns) agent.max_turns = a.maxTurns;
    out.agents[name] = agent;
  }
  for (const [event, matchers] of Object.entries(options.hooks ?? {})) {
    for (const m of matchers) out.hooks.push(m.matcher ? { event, matcher: m.matcher } : { event });
  }
  if (options.permissionMode) out.permission_mode = options.permissionMode;
  if (options.model) out.model = options.model;
  if (options.systemPrompt) out.system_prompt = options.systemPrompt;
  if (options.maxTurns) out.max_turns = options.maxTurns;
  if (options.resume) out.resume = options.resume;
  return out;
}

/** A session that may span several prompts. */
export class Client {
  constructor(options = {}) {
    this.options = options;
    this.tools = new Map((options.tools ?? []).map((t) => [t.name, t]));
    this.queue = [];
    this.waiting = null;
    this.started = false;
    this.child = null;
    this.sessionId = undefined;
  }

  #push(item) {
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve(item);
    } else {
      this.queue.push(item);
    }
  }

  #next() {
    if (this.queue.length > 0) return Promise.resolve(this.queue.shift());
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  #send(message) {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Starts zr and exchanges the protocol version. */
  async connect() {
    if (this.child) return;
    this.child = spawn(findBinary(this.options), ['host'], {
      cwd: this.options.cwd,
      env: { ...process.env, ...(this.options.env ?? {}) },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    this.child.on('error', (e) => this.#push(new ZrError(`cannot start zr: ${e.message}`)));
    const lines = createInterface({ input: this.child.stdout });
    lines.on('line', (line) => this.#line(line));
    lines.on('close', async () => {
      const code = await this.exited;
      this.#push(new ZrError(`zr exited (code ${code}) before the query ended`, code));
    });
    this.#send({ type: 'hello', protocol: PROTOCOL_VERSION, client: 'zr-agents (node)' });
    const hello = await this.#next();
    if (hello instanceof Error) throw hello;
    if (hello.type !== 'hello' || hello.protocol !== PROTOCOL_VERSION) {
      throw new ZrError(hello.message ?? `zr answered the hello with ${JSON.stringify(hello)}`);
    }
  }

  #line(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch (e) {
      this.#push(new ZrError(`zr wrote a line that is not JSON: ${text.slice(0, 200)}`));
      return;
    }
    switch (message.type) {
      case 'tool_call':
      case 'can_use_tool':
      case 'hook_call':
        this.#answer(message).then((reply) => this.#send(reply));
        return;
      case 'error':
        if (message.fatal) this.#push(new ZrError(message.message));
        else console.warn(`zr: ${message.message}`);
        return;
      default:
        this.#push(message);
    }
  }

  async #answer(m) {
    try {
      if (m.type === 'tool_call') {
        const t = this.tools.get(m.tool);
        if (!t) return { type: 'tool_result', id: m.id, content: `no host tool '${m.tool}'`, is_error: true };
        try {
          const out = await t.handler(m.input ?? {});
          return { type: 'tool_result', id: m.id, content: typeof out === 'string' ? out : JSON.stringify(out) };
        } catch (e) {
          return { type: 'tool_result', id: m.id, content: `${e?.name ?? 'Error'}: ${e?.message ?? e}`, is_error: true };
        }
      }
      if (m.type === 'can_use_tool') {
        const d = await this.options.canUseTool(m.tool, m.input, {
          agent: m.agent,
          agentType: m.agent_type,
          crossing: m.crossing,
        });
        if (d?.behavior === 'allow') {
          return { type: 'permission_answer', id: m.id, behavior: 'allow', for_session: Boolean(d.forSession) };
        }
        return { type: 'permission_answer', id: m.id, behavior: 'deny', message: d?.message || 'denied by canUseTool' };
      }
      return await this.#hook(m);
    } catch (e) {
      if (m.type === 'can_use_tool') {
        return { type: 'permission_answer', id: m.id, behavior: 'deny', message: `the host's canUseTool failed: ${e}` };
      }
      return { type: 'hook_answer', id: m.id };
    }
  }

  async #hook(m) {
    const input = {
      hook_event_name: m.event,
      session_id: m.session,
      agent_id: m.agent,
      agent_type: m.agent_type,
    };
    if (m.tool !== undefined) {
      input.tool_name = m.tool;
      input.tool_input = m.input;
    }
    if (m.output !== undefined) input[m.event === 'PostToolUse' ? 'tool_response' : 'output'] = m.output;
    const answer = { type: 'hook_answer', id: m.id };
    for (const matcher of this.options.hooks?.[m.event] ?? []) {
      if (!matches(matcher.matcher, m.tool)) continue;
      for (const hook of matcher.hooks) {
        const out = (await hook(input, undefined, {})) ?? {};
        const specific = out.hookSpecificOutput ?? {};
        const decision = specific.permissionDecision ?? { block: 'deny', approve: 'allow' }[out.decision];
        const reason = specific.permissionDecisionReason ?? out.reason;
        if (specific.updatedInput !== undefined) {
          answer.updated_input = specific.updatedInput;
          input.tool_input = specific.updatedInput;
        }
        if (decision === 'allow' || decision === 'deny') answer.decision = decision;
        if (reason) answer.reason = reason;
        if (decision === 'deny') return answer;
      }
    }
    return answer;
  }

  /** Sends a prompt: the session's first, or the next one of it. */
  async query(prompt) {
    await this.connect();
    if (!this.started) {
      this.started = true;
      this.#send({ type: 'query', prompt, options: spec(this.options) });
    } else {
      this.#send({ type: 'prompt', prompt });
    }
  }

  /** The running query's events, then its result. */
  async *receiveResponse() {
    for (;;) {
      const item = await this.#next();
      if (item instanceof Error) throw item;
      yield item;
      if (item.type === 'result') {
        this.sessionId = item.session;
        return;
      }
    }
  }

  /** Stops the running query (its result has status `interrupted`). */
  async interrupt() {
    this.#send({ type: 'interrupt' });
  }

  /** Closes zr's standard input and waits for it to exit. */
  async close() {
    if (!this.child) return;
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** One query in a new session (or the one `options.resume` names). */
export async function* query({ prompt, options = {} }) {
  const client = new Client(options);
  try {
    await client.query(prompt);
    yield* client.receiveResponse();
  } finally {
    await client.close();
  }
}
