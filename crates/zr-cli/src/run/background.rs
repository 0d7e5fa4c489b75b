//! The background agents a run leaves behind when the root answers: `zr
//! run` waits for them (showing their progress) instead of dropping them
//! with their work, and stops them cleanly on a signal.

use std::collections::VecDeque;
use std::io::Write as _;

use futures_util::{FutureExt as _, StreamExt as _};
use zr_engine::{Agent, BackgroundEvents, Event};
use zr_types::AgentId;

use crate::render::{self, Renderer};
use crate::signal::{Signals, Stop};

/// The events of the session's background agents, followed from the
/// start of the query: while the query runs they also come through its
/// stream (in the same order), so the copies seen there are dropped here;
/// what is left once the query ended is new.
#[derive(Debug)]
pub(super) struct Follow {
    events: BackgroundEvents,
    /// Received here, not (yet) seen in the query's stream.
    pending: VecDeque<Event>,
    /// Subagent events seen in the query's stream whose copy has not come
    /// here (yet): the stream may deliver an event before the router has
    /// handed it to this subscriber. At most [`UNMATCHED`] of them; most
    /// are events of foreground subagents, which never come here.
    unmatched: VecDeque<Event>,
}

/// How many subagent events of the query's stream [`Follow`] remembers.
const UNMATCHED: usize = 256;

impl Follow {
    /// Subscribes to `agent`'s background events.
    pub(super) fn new(agent: &Agent) -> Self {
        Self {
            events: agent.background_events(),
            pending: VecDeque::new(),
            unmatched: VecDeque::new(),
        }
    }

    /// `event` came through the query's stream: its copy here is
    /// forgotten, now or when it arrives.
    pub(super) fn seen(&mut self, event: &Event) {
        self.receive();
        if let Some(i) = self.pending.iter().position(|e| e == event) {
            self.pending.drain(..=i);
        } else if event.agent != AgentId::root() {
            if self.unmatched.len() == UNMATCHED {
                self.unmatched.pop_front();
            }
            self.unmatched.push_back(event.clone());
        }
    }

    /// Takes what arrived so far: copies of events seen in the query's
    /// stream are dropped, the others wait in `pending`.
    fn receive(&mut self) {
        while let Some(Some(event)) = self.events.next().now_or_never() {
            match self.unmatched.iter().position(|e| *e == event) {
                // The events before it were of foreground agents.
                Some(i) => drop(self.unmatched.drain(..=i)),
                None => self.pending.push_back(event),
            }
        }
    }
}

/// Once the query's stream ended: waits until no background agent of
/// `agent`'s session runs, feeding their events to `renderer` (and, when
/// `announce`, saying on standard error whom it waits for); a signal ends
/// the wait and is returned (the caller stops the agents with
/// [`stop_all`]).
pub(super) async fn wait(
    mut follow: Follow,
    agent: &Agent,
    renderer: &mut dyn Renderer,
    signals: &mut Signals,
    announce: bool,
) -> Option<Stop> {
    follow.receive();
    for event in follow.pending.drain(..) {
        renderer.event(&event);
    }
    let mut events = follow.events;
    let running: Vec<String> = agent
        .background_agents()
        .into_iter()
        .filter(zr_engine::BackgroundAgent::is_running)
        .map(|a| format!("{} ({})", a.id, a.description))
        .collect();
    if running.is_empty() {
        return None;
    }
    if announce {
        let (s, them) = if running.len() == 1 {
            ("", "it")
        } else {
            ("s", "them")
        };
        say(&format!(
            "waiting for {} background agent{s}: {} (Ctrl-C stops {them})",
            running.len(),
            running.join(", "),
        ));
    }
    let idle = agent.wait_background();
    tokio::pin!(idle);
    let mut tick = tokio::time::interval(render::TICK);
    loop {
        tokio::select! {
            () = &mut idle => break,
            Some(event) = events.next() => renderer.event(&event),
            stop = signals.recv() => return Some(stop),
            _ = tick.tick() => renderer.tick(),
        }
    }
    // The events sent before the last agent ended.
    while let Some(Some(event)) = events.next().now_or_never() {
        renderer.event(&event);
    }
    None
}

/// Stops every background agent that still runs and waits until their
/// processes are gone; returns their ids.
pub(super) async fn stop_all(agent: &Agent) -> Vec<AgentId> {
    let mut stopped = Vec::new();
    for running in agent.background_agents() {
        if running.is_running() && agent.stop_background(&running.id).await {
            stopped.push(running.id);
        }
    }
    stopped
}

fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
    let _ = err.flush();
}
