//! What a mock model server does with one request: [`Behaviour`], built from
//! constructors (`text`, `tool_calls`, `error`, …) and refined with modifiers
//! (`with_usage`, `cut`, `hang`, …). A behaviour describes the answer in
//! provider-neutral terms; each dialect renders it in its own wire format.

use std::time::Duration;

/// The usage a streamed answer reports unless told otherwise: (input, output).
pub const DEFAULT_USAGE: (u64, u64) = (10, 5);

/// One scripted answer of a mock model server.
#[derive(Debug, Clone)]
pub struct Behaviour {
    pub(crate) reply: Reply,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) header_delay: Option<Duration>,
    pub(crate) chunk_delay: Option<Duration>,
}

#[derive(Debug, Clone)]
pub(crate) enum Reply {
    Stream(Script),
    Error {
        status: u16,
        message: String,
    },
    Embeddings(Vec<Vec<f32>>),
    RawSse(Vec<String>),
    Flood {
        total_bytes: usize,
        chunk_bytes: usize,
    },
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
}

/// A streamed answer in neutral terms.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    pub text: Vec<String>,
    pub calls: Vec<ScriptedCall>,
    pub usage: Option<(u64, u64)>,
    pub finish_reason: Option<String>,
    pub ending: Ending,
    pub interleave: bool,
    pub omit_index: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct ScriptedCall {
    pub name: String,
    pub argument_pieces: Vec<String>,
}

/// How a stream ends; the count is how many frames go out first (half of
/// them when `None`).
#[derive(Debug, Clone)]
pub(crate) enum Ending {
    Complete,
    Cut(Option<usize>),
    Malformed(Option<usize>),
    Hang(Option<usize>),
    ErrorEvent { kind: String, message: String },
}

impl Behaviour {
    fn new(reply: Reply) -> Self {
        Behaviour {
            reply,
            headers: Vec::new(),
            header_delay: None,
            chunk_delay: None,
        }
    }

    fn stream(text: Vec<String>, calls: Vec<ScriptedCall>) -> Self {
        Behaviour::new(Reply::Stream(Script {
            text,
            calls,
            usage: Some(DEFAULT_USAGE),
            finish_reason: None,
            ending: Ending::Complete,
            interleave: false,
            omit_index: false,
        }))
    }

    /// Streams `text` a word at a time, then usage and the finish marker.
    pub fn text(text: &str) -> Self {
        Behaviour::stream(
            text.split_inclusive(' ').map(str::to_string).collect(),
            Vec::new(),
        )
    }

    /// Streams the text in exactly these chunks.
    pub fn text_chunks(chunks: &[&str]) -> Self {
        Behaviour::stream(chunks.iter().map(|c| c.to_string()).collect(), Vec::new())
    }

    /// One tool call, its JSON arguments split across three chunks.
    pub fn tool_call(name: &str, arguments: &str) -> Self {
        Behaviour::tool_calls(&[(name, arguments)])
    }

    /// Several tool calls in one answer, given as (name, JSON arguments),
    /// each one's arguments split across three chunks.
    pub fn tool_calls(calls: &[(&str, &str)]) -> Self {
        let calls = calls
            .iter()
            .map(|(name, arguments)| ScriptedCall {
                name: name.to_string(),
                argument_pieces: split_in_three(arguments),
            })
            .collect();
        Behaviour::stream(Vec::new(), calls)
    }

    /// An HTTP error with the provider's JSON error body. `{api_key}` in the
    /// message is replaced by the key the request carried, as some providers
    /// echo it (so tests can check that Helm scrubs it).
    pub fn error(status: u16, message: &str) -> Self {
        Behaviour::new(Reply::Error {
            status,
            message: message.to_string(),
        })
    }

    /// HTTP 429 with `Retry-After: seconds`.
    pub fn rate_limited(retry_after_seconds: u64) -> Self {
        Behaviour::error(429, "Rate limit reached; please try again later")
            .with_header("retry-after", &retry_after_seconds.to_string())
    }

    /// HTTP 500.
    pub fn server_error() -> Self {
        Behaviour::error(500, "The server had an error while processing your request")
    }

    /// HTTP 401 whose message echoes the key it was sent.
    pub fn unauthorized() -> Self {
        Behaviour::error(401, "Incorrect API key provided: {api_key}")
    }

    /// An error sent inside an otherwise successful (HTTP 200) stream, before
    /// any content: Anthropic's `event: error` (such as `overloaded_error`),
    /// or OpenRouter's `{"error": …}` chunk.
    pub fn stream_error(kind: &str, message: &str) -> Self {
        let mut behaviour = Behaviour::stream(Vec::new(), Vec::new());
        behaviour.script_mut(|s| {
            s.ending = Ending::ErrorEvent {
                kind: kind.to_string(),
                message: message.to_string(),
            }
        });
        behaviour
    }

    /// An embeddings answer with these vectors (OpenAI dialect only).
    pub fn embeddings(vectors: Vec<Vec<f32>>) -> Self {
        Behaviour::new(Reply::Embeddings(vectors))
    }

    /// These SSE frames verbatim (each a whole event, such as
    /// `"data: {…}\n\n"`), for wire shapes the constructors do not cover.
    pub fn raw_sse(frames: &[&str]) -> Self {
        Behaviour::new(Reply::RawSse(
            frames.iter().map(|f| f.to_string()).collect(),
        ))
    }

    /// An OpenAI-style stream of `total_bytes` of text in `chunk_bytes`
    /// deltas, generated as it is sent (the mock never holds it), then the
    /// finish marker and `[DONE]`. [`MockServer::flood_sent`] counts the
    /// bytes of text that went out.
    ///
    /// [`MockServer::flood_sent`]: super::MockServer::flood_sent
    pub fn flood(total_bytes: usize, chunk_bytes: usize) -> Self {
        Behaviour::new(Reply::Flood {
            total_bytes,
            chunk_bytes: chunk_bytes.max(1),
        })
    }

    /// A plain response with this status, content type and body.
    pub fn raw(status: u16, content_type: &str, body: &str) -> Self {
        Behaviour::new(Reply::Raw {
            status,
            content_type: content_type.to_string(),
            body: body.to_string(),
        })
    }

    /// Streams this text before the tool calls.
    pub fn with_text(mut self, text: &str) -> Self {
        self.script_mut(|s| {
            s.text = text.split_inclusive(' ').map(str::to_string).collect();
        });
        self
    }

    /// Reports this usage (input, output tokens).
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.script_mut(|s| s.usage = Some((input_tokens, output_tokens)));
        self
    }

    /// Reports no usage at all.
    pub fn without_usage(mut self) -> Self {
        self.script_mut(|s| s.usage = None);
        self
    }

    /// Sends this finish (stop) reason instead of the natural one, such as
    /// "stop" after tool calls, or Anthropic's "max_tokens".
    pub fn with_finish_reason(mut self, reason: &str) -> Self {
        self.script_mut(|s| s.finish_reason = Some(reason.to_string()));
        self
    }

    /// Sends each call's arguments whole, in one chunk (as Ollama does).
    pub fn whole_arguments(mut self) -> Self {
        self.script_mut(|s| {
            for call in &mut s.calls {
                call.argument_pieces = vec![call.argument_pieces.concat()];
            }
        });
        self
    }

    /// Interleaves the calls' argument chunks, as parallel calls may arrive
    /// (OpenAI dialect; Anthropic's blocks are always sequential).
    pub fn interleaved(mut self) -> Self {
        self.script_mut(|s| s.interleave = true);
        self
    }

    /// Leaves `index` out of tool-call fragments (OpenAI dialect quirk).
    pub fn without_index(mut self) -> Self {
        self.script_mut(|s| s.omit_index = true);
        self
    }

    /// Closes the connection halfway through, before the finish marker.
    pub fn cut(self) -> Self {
        self.ending(Ending::Cut(None))
    }

    /// Closes the connection after this many frames.
    pub fn cut_after(self, frames: usize) -> Self {
        self.ending(Ending::Cut(Some(frames)))
    }

    /// Sends a frame of invalid JSON halfway through.
    pub fn malformed(self) -> Self {
        self.ending(Ending::Malformed(None))
    }

    /// Sends half the frames, then nothing more, never finishing.
    pub fn hang(self) -> Self {
        self.ending(Ending::Hang(None))
    }

    /// Sends this many frames, then hangs.
    pub fn hang_after(self, frames: usize) -> Self {
        self.ending(Ending::Hang(Some(frames)))
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Waits this long before sending the response headers.
    pub fn delay_headers(mut self, delay: Duration) -> Self {
        self.header_delay = Some(delay);
        self
    }

    /// Paces the streamed frames this far apart: frame i leaves i × `delay`
    /// after the stream starts, so the rate holds whatever each write costs.
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = Some(delay);
        self
    }

    fn ending(mut self, ending: Ending) -> Self {
        self.script_mut(|s| s.ending = ending);
        self
    }

    /// Changes the stream script; modifiers of streams do nothing to other replies.
    fn script_mut(&mut self, change: impl FnOnce(&mut Script)) {
        if let Reply::Stream(script) = &mut self.reply {
            change(script);
        }
    }
}

/// Splits text into three non-empty pieces at character boundaries (fewer
/// for very short text).
fn split_in_three(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(3).max(1);
    let pieces: Vec<String> = chars.chunks(size).map(|c| c.iter().collect()).collect();
    if pieces.is_empty() {
        vec![String::new()]
    } else {
        pieces
    }
}
