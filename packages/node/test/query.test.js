// Real queries through the installed package: the zr binary inside it,
// against the loopback model server of loopback.js.
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { Client, ZrError, query, tool } from 'zr-agents';
import { model, system, turns } from './loopback.js';

const WORKER = 'You are the worker.';

function project() {
  const dir = mkdtempSync(join(tmpdir(), 'zr-node-'));
  mkdirSync(join(dir, 'home'));
  mkdirSync(join(dir, 'project'));
  return { cwd: join(dir, 'project'), home: join(dir, 'home') };
}

function options(m, extra = {}) {
  const p = project();
  return {
    cwd: p.cwd,
    env: { ...m.env, HOME: p.home, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' },
    ...extra,
  };
}

async function collect(prompt, opts) {
  const out = [];
  for await (const m of query({ prompt, options: opts })) out.push(m);
  return out;
}

const lookup = tool(
  'lookup',
  'Looks a key up in the table.',
  { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  async ({ key }) => ({ answer: 'the value is 42' })[key] ?? 'no such key',
  { readOnly: true },
);

test('a subagent calls a JavaScript tool', async () => {
  const m = await model((b) => {
    const sub = system(b).includes(WORKER);
    if (!sub && turns(b) === 1) return [null, [['t1', 'Task', { subagent_type: 'worker', description: 'look', prompt: 'find it' }]]];
    if (sub && turns(b) === 1) return [null, [['l1', 'lookup', { key: 'answer' }]]];
    return [sub ? 'the worker found it' : 'all done', []];
  });
  const messages = await collect('look it up', options(m, {
    tools: [lookup],
    agents: { worker: { description: 'Looks things up.', prompt: WORKER, tools: ['lookup'] } },
  }));
  const result = messages.at(-1);
  assert.equal(result.type, 'result');
  assert.equal(result.status, 'completed');
  assert.equal(result.output, 'all done');
  assert.ok(messages.some((x) => x.event === 'subagent_finished'));
  const second = m.requests.find((b) => system(b).includes(WORKER) && turns(b) === 3);
  assert.match(JSON.stringify(second.messages[2]), /the value is 42/);
});

test('canUseTool denies one call', async () => {
  const notes = [];
  const note = tool('note', 'Writes a note.', { type: 'object', properties: { text: { type: 'string' } } }, ({ text }) => {
    notes.push(text);
    return 'written';
  });
  const m = await model((b) => (turns(b) === 1 ? [null, [['n1', 'note', { text: 'first' }], ['n2', 'note', { text: 'second' }]]] : ['noted', []]));
  const messages = await collect('take notes', options(m, {
    tools: [note],
    canUseTool: async (name, input) => (input.text === 'second' ? { behavior: 'deny', message: 'no second notes' } : { behavior: 'allow' }),
  }));
  assert.equal(messages.at(-1).status, 'completed');
  assert.deepEqual(notes, ['first']);
  assert.equal(messages.filter((x) => x.event === 'permission_denied').length, 1);
  assert.match(JSON.stringify(m.requests.at(-1).messages[2]), /no second notes/);
});

test('a PreToolUse hook blocks a call and rewrites another', async () => {
  const m = await model((b) => (turns(b) === 1 ? [null, [['a', 'lookup', { key: 'secret' }], ['b', 'lookup', { key: 'other' }]]] : ['ok', []]));
  const guard = async (input) =>
    input.tool_input.key === 'secret'
      ? { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'secrets stay secret' } }
      : { hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { key: 'answer' } } };
  const messages = await collect('look', options(m, { tools: [lookup], hooks: { PreToolUse: [{ matcher: 'lookup', hooks: [guard] }] } }));
  assert.equal(messages.at(-1).status, 'completed');
  const results = JSON.stringify(m.requests.at(-1).messages[2]);
  assert.match(results, /secrets stay secret/);
  assert.match(results, /the value is 42/);
});

test('MultiTask runs subagents that call the JavaScript tool', async () => {
  const calls = [];
  const count = tool('count', 'Counts.', { type: 'object', properties: { n: { type: 'integer' } } }, ({ n }) => {
    calls.push(n);
    return `counted ${n}`;
  }, { readOnly: true });
  const m = await model((b) => {
    const sub = system(b).includes(WORKER);
    if (!sub && turns(b) === 1) {
      return [null, [['m', 'MultiTask', { tasks: [
        { subagent_type: 'worker', description: 'one', prompt: 'count 1' },
        { subagent_type: 'worker', description: 'two', prompt: 'count 2' },
      ] }]]];
    }
    if (sub && turns(b) === 1) return [null, [['c', 'count', { n: JSON.stringify(b.messages).includes('count 1') ? 1 : 2 }]]];
    return ['done', []];
  });
  const messages = await collect('count twice', options(m, {
    tools: [count],
    agents: { worker: { description: 'Counts.', prompt: WORKER, tools: ['count'] } },
  }));
  assert.equal(messages.at(-1).status, 'completed');
  assert.deepEqual(calls.sort(), [1, 2]);
  assert.equal(messages.filter((x) => x.event === 'subagent_finished').length, 2);
});

test('interrupt stops a query and resume continues the session', async () => {
  const m = await model((b) => (turns(b) === 1 ? [null, [['w', 'wait', {}]]] : ['resumed answer', []]));
  let entered;
  const started = new Promise((resolve) => (entered = resolve));
  const wait = tool('wait', 'Waits forever.', { type: 'object' }, () => {
    entered();
    return new Promise(() => {});
  }, { readOnly: true });
  const opts = options(m, { tools: [wait] });
  const client = new Client(opts);
  await client.query('wait for it');
  const stream = client.receiveResponse();
  const all = (async () => {
    const out = [];
    for await (const x of stream) out.push(x);
    return out;
  })();
  await started;
  await client.interrupt();
  const first = (await all).at(-1);
  await client.close();
  assert.equal(first.status, 'interrupted');
  const resumed = await collect('go on', { ...opts, tools: [], resume: first.session });
  const second = resumed.at(-1);
  assert.equal(second.status, 'completed');
  assert.equal(second.session, first.session);
  assert.equal(second.output, 'resumed answer');
  assert.match(JSON.stringify(m.requests.at(-1).messages), /wait for it/);
});

test('an error is a ZrError with zr\'s text', async () => {
  const p = project();
  await assert.rejects(
    collect('hi', { cwd: p.cwd, env: { HOME: p.home, ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: '', OPENAI_API_KEY: '', OPENAI_BASE_URL: '' } }),
    (e) => e instanceof ZrError && /no model provider is set/.test(e.message),
  );
});
