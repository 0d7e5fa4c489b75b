//! zr-restate against a real `restate-server`: workers in this process
//! behind a loopback TCP proxy, a scripted model, a side-effecting tool
//! that counts its effects by idempotency key. The server and the proxy
//! are zr-test-support's (feature `restate`).

mod background;
mod budget;
mod cancel;
mod durable;
mod fanout;
mod host;
mod nested;
mod remote;
mod server;
mod turns;
mod workers;
