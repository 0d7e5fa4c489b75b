//! Running one model turn's tool calls: read-only calls and delegations
//! (Task, MultiTask) side by side, the others one at a time, results in
//! call order, each result written to the transcript as it comes (and a
//! `call_started` record before a call that is not read-only runs). A
//! turn finished after a resume reuses the results on disk and answers a
//! started call as interrupted.
//!
//! One call passes a pipeline of stages, composed in [`run_one`] and each
//! in its own file: [`screen`] (a recorded result, a stopped agent, an
//! unknown tool, an interrupted call), [`admit`] (PreToolUse hooks, the
//! permission gate), [`dispatch`] (the start record, the tool), then the
//! PostToolUse hooks, the result cut, telemetry and [`report`] (the
//! events and the `tool_result` block). A stage takes the call as it
//! stands (a PreToolUse hook may rewrite its input) and the [`Step`] the
//! stage before passed on: what it works on, or the [`Answer`] the call
//! got without running, which the later stages pass by.

pub(crate) mod admit;
pub(crate) mod dispatch;
pub(crate) mod report;
pub(crate) mod screen;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use futures_util::{StreamExt as _, stream};
use zr_types::{ContentBlock, ToolCall, ToolName, ToolOutput, ToolResultContent};

use crate::history::compact::cut::limit_result;
use crate::session::QueryCtx;
use crate::telemetry::in_span::in_span;
use crate::telemetry::{self, ToolStatus};
use crate::turn::agent_run::AgentRun;
use crate::turn::exec::admit::{permit, pre_tool_use};
use crate::turn::exec::dispatch::dispatch;
use crate::turn::exec::report::{finished, started};
use crate::turn::exec::screen::{Screened, screen};

/// At most this many read-only or delegating calls of one turn run at
/// once (the subagents of delegations are bounded by `max_concurrent`
/// besides).
const MAX_PARALLEL_READS: usize = 10;

/// What a transcript recorded of a turn a kill cut short; empty for a
/// new turn.
#[derive(Debug, Default)]
pub(crate) struct Recorded {
    /// Results on disk, by call id: never produced again.
    pub(crate) results: BTreeMap<String, ContentBlock>,
    /// Calls recorded as started: one without a result that is not
    /// read-only is answered as interrupted, never run again.
    pub(crate) started: BTreeSet<String>,
}

/// A call answered without running its tool (or refused by the gate):
/// the result the model gets and how telemetry records it.
pub(crate) struct Answer {
    output: ToolOutput,
    status: ToolStatus,
}

impl Answer {
    fn new(output: ToolOutput, status: ToolStatus) -> Self {
        Self { output, status }
    }
}

/// What a stage passes on: what the next stage works on, or the answer
/// the call already got, which the next stages pass by.
pub(crate) type Step<T> = Result<T, Answer>;

/// The result of one call, and the tools it asks to load (FindTool).
struct CallOutcome {
    block: ContentBlock,
    load: Vec<ToolName>,
    /// Taken from the transcript (not written again).
    recorded: bool,
}

/// Runs `calls` for `agent`: each run of consecutive calls that may run
/// beside others ([`runs_beside`]: read-only ones, Task and MultiTask)
/// side by side (at most [`MAX_PARALLEL_READS`] at once), every other call
/// alone and in order. Returns one tool result per call, in call order. Tools
/// loaded through FindTool are added once all calls are done.
///
/// Each batch of calls is dropped as soon as it ran: the inputs of a long
/// turn's calls (a root's hundred MultiTask calls of ten tasks each) are
/// held once, by the history, not also by the calls still to come and by
/// those done.
pub(crate) async fn run_calls(
    ctx: &QueryCtx,
    agent: &mut AgentRun,
    calls: Vec<ToolCall>,
    recorded: &Recorded,
) -> Vec<ContentBlock> {
    let mut results = Vec::with_capacity(calls.len());
    let mut load = Vec::new();
    let mut rest = std::collections::VecDeque::from(calls);
    while !rest.is_empty() {
        let reads = rest.iter().take_while(|c| runs_beside(agent, c)).count();
        let now: Vec<ToolCall> = rest.drain(..reads.max(1)).collect();
        let agent_ref: &AgentRun = agent;
        let mut keep = |outcome: CallOutcome| {
            if !outcome.recorded {
                ctx.session
                    .transcripts
                    .result(&ctx.sink, &agent_ref.meta, &outcome.block);
            }
            results.push(outcome.block);
            load.extend(outcome.load);
        };
        if let [call] = now.as_slice() {
            keep(run_one(ctx, agent_ref, call, recorded).await);
        } else {
            // The futures are made before the stream: a mapping closure
            // kept inside it fails the compiler's higher-ranked `Send`
            // check.
            let runs: Vec<_> = now
                .iter()
                .map(|call| run_one(ctx, agent_ref, call, recorded))
                .collect();
            let mut outcomes = stream::iter(runs).buffered(MAX_PARALLEL_READS);
            // In call order, each as soon as it and those before it ended.
            while let Some(outcome) = outcomes.next().await {
                keep(outcome);
            }
        }
    }
    agent.tools.load(&load);
    results
}

/// Whether `call` may run beside the other calls of its turn
/// ([`crate::tools::Callable::runs_beside`]: a read-only tool, or a
/// delegation: Task and MultiTask calls of one turn start together, seed
/// 001; their subagents share the tree's `max_concurrent` slots, and each
/// call keeps its own time budget).
/// Unknown names count as read-only: they are refused without running.
fn runs_beside(agent: &AgentRun, call: &ToolCall) -> bool {
    agent
        .tools
        .get(&call.name)
        .is_none_or(crate::tools::Callable::runs_beside)
}

/// One call's pipeline, in the order of ARCHITECTURE.md's traced call:
/// each stage takes what the one before passed on.
async fn run_one(
    ctx: &QueryCtx,
    agent: &AgentRun,
    call: &ToolCall,
    recorded: &Recorded,
) -> CallOutcome {
    let session = &ctx.session;
    let span = telemetry::tool_span(session.runtime.tracer(), &call.name, &call.id, &call.input);
    let traced = span.clone();
    in_span(
        async move {
            let (sink, meta) = (&ctx.sink, &agent.meta);
            let start = Instant::now();
            // 1. A recorded result, a stopped agent, an unknown tool, an
            //    interrupted call.
            let screened = match screen(agent, call, recorded) {
                Screened::Replayed(block) => {
                    return CallOutcome {
                        block,
                        load: Vec::new(),
                        recorded: true,
                    };
                }
                Screened::Answered(answer) => Err(answer),
                Screened::Run(tool) => Ok(tool),
            };
            // 2. The PreToolUse hooks, which may rewrite the input; 3. the
            //    start event, with the input the tool gets; 4. the
            //    permission gate; 5. the start record and the tool.
            let hooks = agent.hooks(session);
            let (call, hooked) = pre_tool_use(&hooks, call, screened).await;
            started(sink, meta, &call);
            let permitted = permit(&session.gate(), sink, &hooks, agent, &call, hooked).await;
            let ran = dispatch(ctx, agent, &call, permitted).await;
            // 6. The PostToolUse hooks, whose notes to the model come
            //    after the result, which is cut (7.) without them.
            let (output, status, load, notes) = match ran {
                Ok(ran) => {
                    let notes = hooks.post_tool_use(&call, &ran.output).await;
                    let status = ran.status();
                    (ran.output, status, ran.load, notes)
                }
                Err(answer) => (answer.output, answer.status, Vec::new(), Vec::new()),
            };
            let limit = session.config.compaction.max_tool_result_bytes;
            let mut output = limit_result(&session.spill, limit, &meta.id, &call, output).await;
            output.content.extend(
                notes
                    .into_iter()
                    .map(|text| ToolResultContent::Text { text }),
            );
            // 8. Telemetry; 9. the finish event and the result block.
            telemetry::record_tool(&traced, status, || json_text(&output.content));
            CallOutcome {
                block: finished(sink, meta, &call, output, start),
                load,
                recorded: false,
            }
        },
        span,
    )
    .await
}

/// A result's content as JSON, for telemetry.
fn json_text(content: &[ToolResultContent]) -> String {
    serde_json::to_string(content).unwrap_or_default()
}
