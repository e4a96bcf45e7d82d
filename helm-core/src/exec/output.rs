//! A bounded tail of a byte stream: the last `cap` bytes of a command's
//! output or a terminal's scrollback, plus how many bytes went by in all.
//!
//! A command that prints 100 MB costs `cap` bytes of memory, not 100 MB: the
//! reader keeps appending and the oldest bytes fall off the front.

use std::collections::VecDeque;

/// The last `cap` bytes of a stream and the count of every byte seen.
#[derive(Debug, Clone)]
pub(crate) struct OutputTail {
    buf: VecDeque<u8>,
    cap: usize,
    total: u64,
}

impl OutputTail {
    /// An empty tail that keeps at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        OutputTail {
            buf: VecDeque::with_capacity(cap.min(64 * 1024)),
            cap,
            total: 0,
        }
    }

    /// Appends bytes, dropping the oldest ones beyond the cap.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.cap == 0 {
            return;
        }
        if bytes.len() >= self.cap {
            self.buf.clear();
            self.buf.extend(&bytes[bytes.len() - self.cap..]);
            return;
        }
        let overflow = (self.buf.len() + bytes.len()).saturating_sub(self.cap);
        self.buf.drain(..overflow);
        self.buf.extend(bytes);
    }

    /// Every byte seen so far, kept or not.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Whether bytes have fallen off the front.
    pub(crate) fn truncated(&self) -> bool {
        self.total > self.buf.len() as u64
    }

    /// The bytes kept.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        self.buf.iter().copied().collect()
    }

    /// The bytes from stream offset `from` on, the offset to ask from next
    /// time, and how many bytes between `from` and the oldest kept byte were
    /// lost.
    pub(crate) fn since(&self, from: u64) -> (Vec<u8>, u64, u64) {
        let start = self.total - self.buf.len() as u64;
        let (skip, missed) = if from < start {
            (0, start - from)
        } else {
            ((from - start).min(self.buf.len() as u64) as usize, 0)
        };
        (
            self.buf.iter().skip(skip).copied().collect(),
            self.total,
            missed,
        )
    }
}

/// Text for people and agents from a byte tail: lossy UTF-8, without the
/// broken half of a character the cut may have left at the front.
pub(crate) fn tail_text(bytes: &[u8], cut: bool) -> String {
    let start = if cut {
        // Continuation bytes are 0b10xxxxxx; skip at most three of them.
        bytes
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count()
    } else {
        0
    };
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_tail_and_counts_everything() {
        let mut t = OutputTail::new(4);
        t.push(b"ab");
        assert!(!t.truncated());
        t.push(b"cdef");
        assert_eq!(t.bytes(), b"cdef");
        t.push(b"0123456789");
        assert_eq!(t.bytes(), b"6789");
        assert_eq!(t.total(), 16);
        assert!(t.truncated());
    }

    #[test]
    fn since_reports_what_was_missed() {
        let mut t = OutputTail::new(4);
        t.push(b"abc");
        let (b, next, missed) = t.since(0);
        assert_eq!((b.as_slice(), next, missed), (&b"abc"[..], 3, 0));
        t.push(b"defgh");
        let (b, next, missed) = t.since(next);
        assert_eq!((b.as_slice(), next, missed), (&b"efgh"[..], 8, 1));
        let (b, _, _) = t.since(8);
        assert!(b.is_empty());
    }

    #[test]
    fn text_drops_a_split_character() {
        let s = "é!".as_bytes();
        assert_eq!(tail_text(&s[1..], true), "!");
        assert_eq!(tail_text(s, false), "é!");
    }
}
