//! The JSON-RPC edge of the MCP server: the transport that reads protocol
//! lines from stdin for the `rmcp` service and writes its answers to
//! stdout. It answers what the SDK (3.11) leaves undone:
//!
//! - an Invalid Request (a wrong `jsonrpc`, a `method` that is not a
//!   string) is answered with the request's `id` when it can be read, as
//!   JSON-RPC 2.0 requires (`null` otherwise); a known method whose params
//!   do not read is Invalid Params, with its id;
//! - a batch (a JSON array of messages) is taken when the client
//!   negotiated 2025-03-26, the revision that requires servers to accept
//!   them, and answered as one array; refused as one Invalid Request
//!   otherwise (2025-06-18 removed them);
//! - before `initialize`, a request other than `ping` is told to
//!   initialize first (a 2026 request carrying its own protocol version in
//!   `_meta` passes: that revision has no `initialize`).
//!
//! Lines that are not JSON are ignored, as the SDKs do (answering them
//! could start an error storm). A line over the limit is not kept, and a
//! line nested deeper than the parser takes cannot be parsed: both are
//! answered with an Invalid Request carrying the request's `id` when a
//! streaming read of the line ([`probe`]) finds it at the top level
//! (`null` otherwise), so that the client never waits for an answer.

mod probe;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::ErrorData;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use probe::Probe;

/// The protocol revision whose clients may send batches.
pub const BATCH_REVISION: &str = "2025-03-26";

/// The `_meta` key of a 2026 request's own protocol version.
const INLINE_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The deepest nesting the JSON parser takes (serde_json refuses the
/// 128th open bracket).
pub const MAX_DEPTH: usize = 127;

/// The request methods of the protocol: a params error on one of them is
/// Invalid Params; on any other method, Invalid Request.
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
];

/// The transport: stdin in, stdout out (through one writer task, so that
/// a line is always written whole, whoever sends it).
pub struct Edge<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of a line over `max_line`.
    discarding: bool,
    /// The streaming reading of the line being dropped.
    probe: Probe,
    max_line: usize,
    /// Messages of a batch, handed to the service one by one.
    queue: VecDeque<RxJsonRpcMessage<RoleServer>>,
    session: Arc<Mutex<Session>>,
    out: Option<mpsc::UnboundedSender<String>>,
    writer: Option<tokio::task::JoinHandle<()>>,
}

/// What the edge knows of the session.
#[derive(Debug, Default)]
struct Session {
    /// The id of the `initialize` request, until it is answered.
    initializing: Option<Value>,
    /// The revision the initialize result names.
    revision: Option<String>,
    /// Batches whose answers are not all in yet.
    batches: Vec<Batch>,
}

/// A batch being answered: the request ids still waiting, the answers in.
#[derive(Debug)]
struct Batch {
    waiting: Vec<Value>,
    answers: Vec<Value>,
}

/// What to do with one incoming message.
enum Incoming {
    /// Hand it to the service.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Answer it here.
    Answer(Value),
    /// Drop it (a notification that does not read).
    Skip,
}

impl<R: AsyncRead + Unpin + Send> Edge<R> {
    /// The transport over `read` and `write`; lines over `max_line` bytes
    /// are dropped. Must be made inside the runtime (it starts the writer).
    pub fn new<W>(read: R, mut write: W, max_line: usize) -> Edge<R>
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, mut lines) = mpsc::unbounded_channel::<String>();
        let writer = tokio::spawn(async move {
            while let Some(line) = lines.recv().await {
                if write.write_all(line.as_bytes()).await.is_err() || write.flush().await.is_err() {
                    break;
                }
            }
        });
        Edge {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            probe: Probe::default(),
            max_line,
            queue: VecDeque::new(),
            session: Arc::default(),
            out: Some(out),
            writer: Some(writer),
        }
    }

    /// Queue `value` as one line on stdout.
    fn emit(&self, value: &Value) -> std::io::Result<()> {
        emit(self.out.as_ref(), value)
    }

    /// Read one line into `self.line`, bounded: `Some(true)` a line,
    /// `Some(false)` a line over the limit (not kept: read through
    /// `self.probe` to its end), `None` the end.
    /// Cancel-safe: a partial line stays in `self.line`.
    async fn read_line(&mut self) -> Option<bool> {
        loop {
            let available = self.read.fill_buf().await.ok()?;
            if available.is_empty() {
                // An over-long last line is still answered.
                return std::mem::take(&mut self.discarding).then_some(false);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            if !self.discarding && self.line.len() + take > self.max_line {
                self.discarding = true;
                self.probe = Probe::default();
                self.probe.feed(&self.line);
                self.line.clear();
            }
            if self.discarding {
                self.probe.feed(&available[..take]);
            } else {
                self.line.extend_from_slice(&available[..take]);
            }
            self.read.consume(take);
            if newline.is_some() {
                return Some(!std::mem::take(&mut self.discarding));
            }
        }
    }

    /// The next message for the service, answering here what is ours to
    /// answer; `None` at the end of input.
    async fn next(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(message) = self.queue.pop_front() {
                return Some(message);
            }
            if !self.read_line().await? {
                let why = format!(
                    "the request is over {} bytes, the most one line may hold; it was not read",
                    self.max_line
                );
                let id = self.probe.id();
                let _ = self.emit(&error(id.as_ref(), ErrorData::invalid_request(why, None)));
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            let Ok(value) = serde_json::from_slice::<Value>(text) else {
                if let Some(answer) = too_deep(text) {
                    let _ = self.emit(&answer);
                }
                continue;
            };
            // A repeated field would reach the tools as its last value
            // only (a brief's hidden first value never passing the
            // secret gate): refused with the field's path.
            if let Some(path) = crate::brief::duplicate_field(text) {
                let why = format!(
                    "the request repeats the field {path}; a field may appear once per object"
                );
                let _ = self.emit(&error(
                    value.get("id"),
                    ErrorData::invalid_params(why, None),
                ));
                continue;
            }
            let incoming = match value {
                Value::Array(items) => {
                    self.batch(items);
                    continue;
                }
                other => self.lock().incoming(other),
            };
            match incoming {
                Incoming::Message(message) => return Some(*message),
                Incoming::Answer(answer) => {
                    let _ = self.emit(&answer);
                }
                Incoming::Skip => {}
            }
        }
    }

    /// Take a batch: its messages queued for the service and registered so
    /// that their answers go out as one array; or one Invalid Request when
    /// the revision has no batches, or the batch is empty.
    fn batch(&mut self, items: Vec<Value>) {
        let session = self.session.clone();
        let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
        let refusal = match session.revision.as_deref() {
            _ if items.is_empty() => Some("an empty batch".to_string()),
            Some(BATCH_REVISION) => None,
            Some(other) => Some(format!(
                "batches are not part of protocol revision {other} (only of {BATCH_REVISION})"
            )),
            None => Some(format!(
                "a batch before initialize; batches need protocol revision {BATCH_REVISION}"
            )),
        };
        if let Some(why) = refusal {
            drop(session);
            let _ = self.emit(&error(None, ErrorData::invalid_request(why, None)));
            return;
        }
        let mut batch = Batch {
            waiting: Vec::new(),
            answers: Vec::new(),
        };
        for item in items {
            match session.incoming(item) {
                Incoming::Message(message) => {
                    if let RxJsonRpcMessage::<RoleServer>::Request(request) = message.as_ref() {
                        batch.waiting.push(json!(request.id));
                    }
                    self.queue.push_back(*message);
                }
                Incoming::Answer(answer) => batch.answers.push(answer),
                Incoming::Skip => {}
            }
        }
        if !batch.waiting.is_empty() {
            session.batches.push(batch);
        } else if !batch.answers.is_empty() {
            drop(session);
            let _ = self.emit(&Value::Array(batch.answers));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Queue `value` as one line for the writer.
fn emit(out: Option<&mpsc::UnboundedSender<String>>, value: &Value) -> std::io::Result<()> {
    let mut line = serde_json::to_string(value).map_err(std::io::Error::other)?;
    line.push('\n');
    out.and_then(|out| out.send(line).ok())
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotConnected, "stdout is closed"))
}

/// The answer to a line that does not parse because it nests deeper than
/// [`MAX_DEPTH`] (with its `id` when the line shows it); `None` for any
/// other line that is not JSON.
fn too_deep(text: &[u8]) -> Option<Value> {
    let mut probe = Probe::default();
    probe.feed(text);
    (probe.deepest > MAX_DEPTH).then(|| {
        let why = format!(
            "the request nests {} levels deep; the most it may nest is {MAX_DEPTH}",
            probe.deepest
        );
        error(probe.id().as_ref(), ErrorData::invalid_request(why, None))
    })
}

/// A JSON-RPC error answer.
fn error(id: Option<&Value>, error: ErrorData) -> Value {
    json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": error})
}

impl Session {
    /// Check one message (an object, alone or in a batch): the message for
    /// the service, or the answer it gets here.
    fn incoming(&mut self, value: Value) -> Incoming {
        let Some(object) = value.as_object() else {
            return Incoming::Answer(error(
                None,
                ErrorData::invalid_request("a JSON-RPC message is an object", None),
            ));
        };
        let id = object
            .get("id")
            .filter(|id| id.is_string() || id.is_number());
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            let why = "\"jsonrpc\" must be \"2.0\"";
            return Incoming::Answer(error(id, ErrorData::invalid_request(why, None)));
        }
        let method = match object.get("method") {
            None => None,
            Some(Value::String(method)) => Some(method.as_str()),
            Some(_) => {
                let why = "\"method\" must be a string";
                return Incoming::Answer(error(id, ErrorData::invalid_request(why, None)));
            }
        };
        if let Some(method) = method {
            if object.get("id").is_some_and(|raw| Some(raw) != id) {
                let why = "\"id\" must be a string or a number";
                return Incoming::Answer(error(None, ErrorData::invalid_request(why, None)));
            }
            if let Some(id) = id
                && let Some(answer) = self.before_initialize(id, method, &value)
            {
                return Incoming::Answer(answer);
            }
        }
        let (id, method) = (id.cloned(), method.map(str::to_string));
        match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
            Ok(message) => Incoming::Message(Box::new(message)),
            Err(e) => match (id, method.as_deref()) {
                (Some(id), Some(method)) => {
                    let why = format!("'{method}': {e}");
                    let answer = if METHODS.contains(&method) {
                        ErrorData::invalid_params(why, None)
                    } else {
                        ErrorData::invalid_request(why, None)
                    };
                    Incoming::Answer(error(Some(&id), answer))
                }
                _ => Incoming::Skip,
            },
        }
    }

    /// The answer to request `id` of `method` while the session is not
    /// initialized, when it is not one to pass on: initialize first. Notes
    /// the `initialize` request's id.
    fn before_initialize(&mut self, id: &Value, method: &str, request: &Value) -> Option<Value> {
        if self.revision.is_some() || self.initializing.is_some() {
            return None;
        }
        if method == "initialize" {
            self.initializing = Some(id.clone());
            return None;
        }
        let inline = request
            .pointer("/params/_meta")
            .and_then(|meta| meta.get(INLINE_VERSION))
            .is_some_and(Value::is_string);
        if method == "ping" || inline {
            return None;
        }
        let why = format!(
            "'{method}' before initialize: initialize first (send `initialize`, then `notifications/initialized`); only ping is answered before it"
        );
        Some(error(Some(id), ErrorData::invalid_request(why, None)))
    }

    /// What goes out for one answer of the service: the answer itself, or,
    /// for the last answer a batch waited for, the batch's answers as one
    /// array (nothing for the others). Notes the negotiated revision.
    fn outgoing(&mut self, value: Value) -> Option<Value> {
        let id = value.get("id").cloned().unwrap_or(Value::Null);
        if self.initializing.as_ref() == Some(&id) {
            self.initializing = None;
            self.revision = value
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        let is_answer = value.get("result").is_some() || value.get("error").is_some();
        let Some(at) = self
            .batches
            .iter()
            .position(|b| is_answer && b.waiting.contains(&id))
        else {
            return Some(value);
        };
        let batch = &mut self.batches[at];
        batch.waiting.retain(|w| *w != id);
        batch.answers.push(value);
        if !batch.waiting.is_empty() {
            return None;
        }
        Some(Value::Array(self.batches.remove(at).answers))
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for Edge<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_value(&item)
            .map_err(std::io::Error::other)
            .and_then(|value| match self.lock().outgoing(value) {
                Some(line) => self.emit(&line),
                None => Ok(()),
            });
        std::future::ready(sent)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.next()
    }

    /// Close stdout once every queued line is written.
    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.out = None;
        let writer = self.writer.take();
        async move {
            if let Some(writer) = writer {
                let _ = writer.await;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(session: &mut Session, value: Value) -> Value {
        match session.incoming(value) {
            Incoming::Answer(answer) => answer,
            Incoming::Message(m) => panic!("passed on: {m:?}"),
            Incoming::Skip => panic!("skipped"),
        }
    }

    #[test]
    fn an_invalid_request_is_answered_with_its_id_when_readable() {
        let mut session = Session::default();
        let a = answer(
            &mut session,
            json!({"jsonrpc": "2.0", "id": 3, "method": 42}),
        );
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(3), json!(-32600))
        );
        let a = answer(
            &mut session,
            json!({"jsonrpc": "1.0", "id": "x", "method": "ping"}),
        );
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!("x"), json!(-32600))
        );
        let a = answer(
            &mut session,
            json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
        );
        assert_eq!(a["id"], Value::Null);
        let a = answer(&mut session, json!(7));
        assert_eq!(a["id"], Value::Null);
    }

    #[test]
    fn before_initialize_only_ping_initialize_and_2026_requests_pass() {
        let mut session = Session::default();
        let a = answer(
            &mut session,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        );
        assert!(
            a["error"]["message"]
                .as_str()
                .unwrap()
                .contains("initialize first")
        );
        let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
        assert!(matches!(session.incoming(ping), Incoming::Message(_)));
        let init = json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        assert!(matches!(session.incoming(init), Incoming::Message(_)));
        let result =
            json!({"jsonrpc": "2.0", "id": 3, "result": {"protocolVersion": "2025-03-26"}});
        assert!(session.outgoing(result).is_some());
        assert_eq!(session.revision.as_deref(), Some(BATCH_REVISION));
        let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
        assert!(matches!(session.incoming(list), Incoming::Message(_)));
    }

    #[test]
    fn a_batch_is_answered_as_one_array_when_its_last_answer_is_in() {
        let mut session = Session {
            revision: Some(BATCH_REVISION.into()),
            ..Session::default()
        };
        session.batches.push(Batch {
            waiting: vec![json!(1), json!("b")],
            answers: vec![json!({"jsonrpc": "2.0", "id": null, "error": {}})],
        });
        assert!(
            session
                .outgoing(json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
                .is_none()
        );
        let all = session.outgoing(json!({"jsonrpc": "2.0", "id": "b", "result": {}}));
        assert_eq!(all.unwrap().as_array().unwrap().len(), 3);
        assert!(session.batches.is_empty());
        let alone = session.outgoing(json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
        assert_eq!(alone.unwrap()["id"], 9);
    }
}
