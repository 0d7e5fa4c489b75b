// Types of zr-agents, matching schema/host-protocol.schema.json (protocol 1).

export declare const PROTOCOL_VERSION: 1;

export declare class ZrError extends Error {
  exitCode?: number;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

interface EventBase {
  type: 'event';
  at_ms: number;
  agent: string;
  agent_type: string;
}

export type EventMessage = EventBase &
  (
    | { event: 'text_delta'; text: string }
    | { event: 'thinking_delta'; text: string }
    | { event: 'model_retry'; attempt: number; delay_ms: number; reason: string }
    | { event: 'turn_finished'; turn: number; stop_reason: string; usage: Usage }
    | { event: 'usage'; agent_usage: Usage; total_usage: Usage }
    | { event: 'tool_call_started'; call_id: string; tool: string; input: unknown }
    | { event: 'tool_call_finished'; call_id: string; tool: string; is_error: boolean; summary: string; duration_ms: number }
    | { event: 'tool_failed'; call_id: string; tool: string; error: string }
    | { event: 'subagent_started'; parent: string; description: string; index: number; background: boolean }
    | { event: 'subagent_running' }
    | { event: 'subagent_finished'; result: Record<string, unknown> }
    | { event: 'subagent_progress'; summary: string }
    | { event: 'permission_denied'; call_id: string; tool: string; reason: string }
    | { event: 'compacted'; before_tokens: number; after_tokens: number; messages: number; usage: Usage }
    | { event: 'compaction_failed'; before_tokens: number; reason: string }
    | { event: 'transcript_error'; path: string; error: string }
    | { event: 'resume_warning'; message: string }
    | { event: 'hook_stopped'; reason: string }
  );

export interface ResultMessage {
  type: 'result';
  session: string;
  status: 'completed' | 'max_turns' | 'denied' | 'interrupted' | 'error' | (string & {});
  output: string;
  turns: number;
  usage: Usage;
  total_usage: Usage;
  duration_ms: number;
  error?: string;
  /** The session budget that ended the query (status `budget_exhausted`). */
  budget_ended?: { budget: 'tokens'; limit: number } | { budget: 'cost_usd'; limit: number };
}

export type Message = EventMessage | ResultMessage;

export interface Tool<I = any> {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  handler: (input: I) => unknown | Promise<unknown>;
  readOnly: boolean;
}

export declare function tool<I = any>(
  name: string,
  description: string,
  inputSchema: Record<string, unknown>,
  handler: (input: I) => unknown | Promise<unknown>,
  options?: { readOnly?: boolean },
): Tool<I>;

export interface AgentDefinition {
  description: string;
  prompt: string;
  tools?: string[];
  disallowedTools?: string[];
  model?: string;
  maxTurns?: number;
}

export type PermissionResult =
  | { behavior: 'allow'; forSession?: boolean }
  | { behavior: 'deny'; message?: string };

export interface PermissionContext {
  agent: string;
  agentType: string;
  crossing?: string;
}

export type HookEvent = 'PreToolUse' | 'PostToolUse' | 'SubagentStart' | 'SubagentStop' | 'Stop';

export type HookCallback = (
  input: Record<string, unknown>,
  toolUseID: string | undefined,
  options: Record<string, unknown>,
) => Promise<Record<string, unknown> | void>;

export interface HookCallbackMatcher {
  matcher?: string;
  hooks: HookCallback[];
}

export interface Options {
  agents?: Record<string, AgentDefinition>;
  tools?: Tool[];
  canUseTool?: (toolName: string, input: unknown, context: PermissionContext) => Promise<PermissionResult>;
  hooks?: Partial<Record<HookEvent, HookCallbackMatcher[]>>;
  permissionMode?: 'default' | 'acceptEdits' | 'plan' | 'dontAsk' | 'bypassPermissions';
  model?: string;
  systemPrompt?: string;
  maxTurns?: number;
  resume?: string;
  cwd?: string;
  env?: Record<string, string>;
  pathToZrExecutable?: string;
}

export declare class Client {
  constructor(options?: Options);
  sessionId?: string;
  connect(): Promise<void>;
  query(prompt: string): Promise<void>;
  receiveResponse(): AsyncGenerator<Message, void>;
  interrupt(): Promise<void>;
  close(): Promise<void>;
}

export declare function query(args: { prompt: string; options?: Options }): AsyncGenerator<Message, void>;
