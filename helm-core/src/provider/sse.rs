//! A small Server-Sent Events parser, the framing both model APIs stream in.
//!
//! The adapters feed it the response body chunk by chunk, as the network
//! delivers it, and get back whole events. Chunks may split anywhere: inside a
//! line, between `\r` and `\n`, or inside a multi-byte UTF-8 character, so the
//! parser keeps raw bytes until a line is complete and only then decodes it.
//! It follows the WHATWG event-stream rules for lines and fields, with one
//! leniency: an event still open when the body ends is delivered rather than
//! dropped, because some servers omit the blank line after their last event.

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; empty when the server sent none (a plain "message").
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Turns body chunks into [`SseEvent`]s.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// Bytes of a line not yet terminated.
    pending: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` at the start of the next one
    /// belongs to that line ending.
    after_carriage_return: bool,
    /// Whether the first line has been seen (a leading BOM is dropped there).
    started: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub(crate) fn new() -> Self {
        SseParser::default()
    }

    /// Feeds one chunk and returns the events it completed.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_carriage_return && !rest.is_empty() {
            self.after_carriage_return = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.pending.extend_from_slice(&rest[..end]);
            let line = std::mem::take(&mut self.pending);
            self.take_line(&line, &mut events);
            let terminator_len = if rest[end] == b'\r' {
                match rest.get(end + 1) {
                    Some(b'\n') => 2,
                    Some(_) => 1,
                    None => {
                        self.after_carriage_return = true;
                        1
                    }
                }
            } else {
                1
            };
            rest = &rest[end + terminator_len..];
        }
        self.pending.extend_from_slice(rest);
        events
    }

    /// The body ended: returns the event still open, if it has data.
    pub(crate) fn finish(&mut self) -> Option<SseEvent> {
        let mut events = Vec::new();
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.take_line(&line, &mut events);
        }
        self.dispatch(&mut events);
        events.pop()
    }

    fn take_line(&mut self, raw: &[u8], events: &mut Vec<SseEvent>) {
        // Line terminators are ASCII, so a complete line never ends inside a
        // UTF-8 sequence; invalid bytes become U+FFFD as the standard says.
        let decoded = String::from_utf8_lossy(raw);
        let mut line: &str = &decoded;
        if !self.started {
            self.started = true;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(events);
            return;
        }
        if line.starts_with(':') {
            return; // a comment, such as OpenRouter's keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            // `id` and `retry` serve reconnection, which a model response
            // never does; unknown fields are ignored by the standard.
            _ => {}
        }
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if !std::mem::take(&mut self.has_data) {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        events.push(SseEvent { event, data });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &str, data: &str) -> SseEvent {
        SseEvent {
            event: name.to_string(),
            data: data.to_string(),
        }
    }

    /// Feeds `input` split at every possible pair of points and checks that
    /// the result never depends on where the chunks fell.
    fn parse_in_every_split(input: &[u8]) -> Vec<SseEvent> {
        let whole = parse_chunks(&[input]);
        for first in 0..=input.len() {
            for second in first..=input.len() {
                let parts = [&input[..first], &input[first..second], &input[second..]];
                assert_eq!(
                    parse_chunks(&parts),
                    whole,
                    "split at {first} and {second} changed the result"
                );
            }
        }
        whole
    }

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events: Vec<SseEvent> = chunks.iter().flat_map(|c| parser.push(c)).collect();
        events.extend(parser.finish());
        events
    }

    #[test]
    fn parses_data_events_separated_by_blank_lines() {
        let events = parse_in_every_split(b"data: {\"a\":1}\n\ndata: [DONE]\n\n");
        assert_eq!(events, vec![event("", "{\"a\":1}"), event("", "[DONE]")]);
    }

    #[test]
    fn accepts_crlf_and_lone_cr_line_endings() {
        let events = parse_in_every_split(b"data: one\r\n\r\ndata: two\r\rdata: three\n\n");
        assert_eq!(
            events,
            vec![event("", "one"), event("", "two"), event("", "three")]
        );
    }

    #[test]
    fn joins_multi_line_data_with_newlines() {
        let events = parse_in_every_split(b"data: first\ndata:second\ndata:  third\n\n");
        assert_eq!(events, vec![event("", "first\nsecond\n third")]);
    }

    #[test]
    fn reads_event_names_and_resets_them_after_each_event() {
        let input = b"event: message_start\ndata: {}\n\ndata: plain\n\n";
        let events = parse_in_every_split(input);
        assert_eq!(
            events,
            vec![event("message_start", "{}"), event("", "plain")]
        );
    }

    #[test]
    fn skips_comments_and_events_without_data() {
        let input = b": OPENROUTER PROCESSING\n\nevent: ping\n\nid: 7\nretry: 100\ndata: x\n\n";
        let events = parse_in_every_split(input);
        assert_eq!(events, vec![event("", "x")]);
    }

    #[test]
    fn keeps_multi_byte_characters_whole_across_chunk_boundaries() {
        let input = "data: héllo wörld 🚢\n\n".as_bytes();
        let events = parse_in_every_split(input);
        assert_eq!(events, vec![event("", "héllo wörld 🚢")]);
    }

    #[test]
    fn delivers_a_final_event_without_its_blank_line() {
        let events = parse_in_every_split(b"data: a\n\ndata: [DONE]");
        assert_eq!(events, vec![event("", "a"), event("", "[DONE]")]);
    }

    #[test]
    fn drops_a_leading_byte_order_mark() {
        let events = parse_in_every_split("\u{feff}data: a\n\n".as_bytes());
        assert_eq!(events, vec![event("", "a")]);
    }

    #[test]
    fn a_field_without_a_colon_has_an_empty_value() {
        let events = parse_in_every_split(b"data\n\n");
        assert_eq!(events, vec![event("", "")]);
    }

    #[test]
    fn replaces_invalid_utf8_instead_of_failing() {
        let events = parse_chunks(&[b"data: a\xffb\n\n"]);
        assert_eq!(events, vec![event("", "a\u{fffd}b")]);
    }
}
