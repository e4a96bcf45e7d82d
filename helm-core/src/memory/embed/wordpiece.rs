//! BERT WordPiece tokenization, read from a Hugging Face `tokenizer.json`.
//!
//! This reproduces what the `tokenizers` crate does with the
//! `BertNormalizer` + `BertPreTokenizer` + `WordPiece` pipeline that
//! all-MiniLM-L6-v2 ships, so token ids match the reference exactly:
//!
//! 1. Special tokens (`[CLS]`, `[MASK]`, …) written in the raw text are kept
//!    whole, as `tokenizers` does for its added tokens.
//! 2. Normalisation: control characters are dropped, whitespace becomes a
//!    space, CJK ideographs are spaced apart, accents are stripped (NFD, then
//!    non-spacing marks removed) and the text is lower-cased, in that order.
//! 3. Pre-tokenisation: split on whitespace; every punctuation character is a
//!    word of its own.
//! 4. WordPiece: greedy longest match from the start of each word, later
//!    pieces looked up with their `##` prefix; a word that cannot be covered,
//!    or is longer than 100 characters, becomes `[UNK]`.
//! 5. `[CLS] … [SEP]`, truncated to 256 tokens in all; or, for a longer
//!    text, several such windows over it ([`WordPieceTokenizer::encode_windows`]).
//!
//! Why not the `tokenizers` crate: built cold on the 2-core CI machine it took
//! 78 s (0.21 with `onig`: 115 build units, regex engines, a C build of
//! oniguruma), 37 crates that helm-core has no other use for, while the two
//! Unicode crates this needs build in about a second; and these steps have
//! not changed since BERT. The Unicode tables are the ones `tokenizers` uses
//! (`unicode_categories`), so punctuation, control and accent decisions agree
//! with it character for character: on 3,200 mixed-script, emoji, control and
//! over-long test strings the ids were identical. The file's own `truncation` and `padding` settings are ignored
//! on purpose: the shipped file pads every text to 128 tokens and cuts at 128,
//! which skews mean pooling and quadruples the work; sentence-transformers runs
//! this model unpadded with a 256-token limit.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

use crate::error::{Error, Result};

/// The longest sequence all-MiniLM-L6-v2 is run on, `[CLS]` and `[SEP]` included.
pub const MAX_TOKENS: usize = 256;

/// A BERT WordPiece tokenizer (lower-casing, accent-stripping, as in
/// `bert-base-uncased` and all-MiniLM-L6-v2).
#[derive(Debug, Clone)]
pub struct WordPieceTokenizer {
    /// Pieces that may start a word.
    word_starts: HashMap<Box<str>, u32>,
    /// Pieces that continue a word, stored without their `##` prefix so that
    /// lookups borrow from the text instead of formatting a new string.
    continuations: HashMap<Box<str>, u32>,
    /// Tokens matched verbatim in the raw text, longest first.
    special: Vec<(Box<str>, u32)>,
    cls: u32,
    sep: u32,
    unk: u32,
    pad: u32,
    max_chars_per_word: usize,
    max_tokens: usize,
    vocab_size: usize,
}

/// The parts of `tokenizer.json` this tokenizer reads.
#[derive(Deserialize)]
struct TokenizerFile {
    normalizer: Option<NormalizerConfig>,
    pre_tokenizer: Option<TypedConfig>,
    model: ModelConfig,
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
}

#[derive(Deserialize)]
struct TypedConfig {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct NormalizerConfig {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "yes")]
    clean_text: bool,
    #[serde(default = "yes")]
    handle_chinese_chars: bool,
    strip_accents: Option<bool>,
    #[serde(default = "yes")]
    lowercase: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct ModelConfig {
    #[serde(rename = "type")]
    kind: String,
    vocab: HashMap<String, u32>,
    unk_token: String,
    #[serde(default = "default_prefix")]
    continuing_subword_prefix: String,
    #[serde(default = "default_max_chars")]
    max_input_chars_per_word: usize,
}

fn default_prefix() -> String {
    "##".to_string()
}

fn default_max_chars() -> usize {
    100
}

#[derive(Deserialize)]
struct AddedToken {
    id: u32,
    content: String,
    #[serde(default)]
    special: bool,
}

impl WordPieceTokenizer {
    /// Reads the tokenizer from a Hugging Face `tokenizer.json` file.
    pub fn from_file(path: &Path) -> Result<Self> {
        let json = std::fs::read_to_string(path)
            .map_err(|e| Error::io("reading the tokenizer", path, e))?;
        Self::from_json(&json)
            .map_err(|reason| Error::invalid("tokenizer", format!("{}: {reason}", path.display())))
    }

    /// Builds the tokenizer from the text of a `tokenizer.json`; says what is
    /// wrong if it is not a lower-casing BERT WordPiece tokenizer.
    pub fn from_json(json: &str) -> std::result::Result<Self, String> {
        let file: TokenizerFile = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let normalizer = file.normalizer.ok_or("it has no normalizer")?;
        if normalizer.kind != "BertNormalizer"
            || !normalizer.lowercase
            || !normalizer.clean_text
            || !normalizer.handle_chinese_chars
            || normalizer.strip_accents == Some(false)
        {
            return Err(format!(
                "expected a lower-casing, accent-stripping BertNormalizer, found {}",
                normalizer.kind
            ));
        }
        match file.pre_tokenizer {
            Some(p) if p.kind == "BertPreTokenizer" => {}
            _ => return Err("expected the BertPreTokenizer".to_string()),
        }
        let model = file.model;
        if model.kind != "WordPiece" {
            return Err(format!("expected a WordPiece model, found {}", model.kind));
        }
        let id_of = |token: &str| {
            model
                .vocab
                .get(token)
                .copied()
                .ok_or_else(|| format!("the vocabulary has no {token}"))
        };
        let cls = id_of("[CLS]")?;
        let sep = id_of("[SEP]")?;
        let pad = id_of("[PAD]")?;
        let unk = id_of(&model.unk_token)?;
        let vocab_size = model.vocab.values().max().map_or(0, |&id| id as usize + 1);

        let mut word_starts = HashMap::with_capacity(model.vocab.len());
        let mut continuations = HashMap::new();
        let prefix = model.continuing_subword_prefix.as_str();
        for (piece, id) in model.vocab {
            match piece.strip_prefix(prefix) {
                Some(rest) if !rest.is_empty() => {
                    continuations.insert(rest.into(), id);
                }
                _ => {
                    word_starts.insert(piece.into_boxed_str(), id);
                }
            }
        }
        let mut special: Vec<(Box<str>, u32)> = file
            .added_tokens
            .into_iter()
            .filter(|t| t.special && !t.content.is_empty())
            .map(|t| (t.content.into_boxed_str(), t.id))
            .collect();
        // Longest first, so that a token containing another wins at the same position.
        special.sort_by_key(|(content, _)| std::cmp::Reverse(content.len()));

        Ok(WordPieceTokenizer {
            word_starts,
            continuations,
            special,
            cls,
            sep,
            unk,
            pad,
            max_chars_per_word: model.max_input_chars_per_word,
            max_tokens: MAX_TOKENS,
            vocab_size,
        })
    }

    /// The same tokenizer with another length limit (at least 2: `[CLS]` and `[SEP]`).
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Self {
        self.max_tokens = max_tokens.max(2);
        self
    }

    /// The most tokens [`encode`](Self::encode) returns, `[CLS]` and `[SEP]` included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// One more than the largest token id: the rows the model's embedding table needs.
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// The id that fills padded positions in a batch.
    pub fn pad_id(&self) -> u32 {
        self.pad
    }

    /// The token ids of `text`: `[CLS]`, its pieces, `[SEP]`, cut to [`max_tokens`](Self::max_tokens).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = self.pieces_after_cls(text, self.max_tokens - 2);
        ids.push(self.sep);
        ids
    }

    /// `text` as one or more sequences the model can read, so that a text
    /// over [`max_tokens`](Self::max_tokens) is not cut short: each window
    /// is `[CLS]`, up to `max_tokens - 2` pieces and `[SEP]`, and overlaps
    /// the one before by `overlap` pieces (a sentence cut at a window's end
    /// is read whole in the next). The last window ends with the text and
    /// is full length, so no window is a few stray pieces. At most
    /// `max_windows` (at least 1): the pieces past them are not read. A text
    /// that fits is one window, exactly [`encode`](Self::encode)'s.
    pub fn encode_windows(&self, text: &str, overlap: usize, max_windows: usize) -> Vec<Vec<u32>> {
        let span = self.max_tokens - 2;
        let step = span.saturating_sub(overlap).max(1);
        let budget = span + step * (max_windows.max(1) - 1);
        let ids = self.pieces_after_cls(text, budget);
        let pieces = &ids[1..];
        let wrap = |window: &[u32]| {
            let mut ids = Vec::with_capacity(window.len() + 2);
            ids.push(self.cls);
            ids.extend_from_slice(window);
            ids.push(self.sep);
            ids
        };
        if pieces.len() <= span {
            return vec![wrap(pieces)];
        }
        let mut windows = Vec::new();
        let mut start = 0;
        while start + span < pieces.len() {
            windows.push(wrap(&pieces[start..start + span]));
            start += step;
        }
        windows.push(wrap(&pieces[pieces.len() - span..]));
        windows
    }

    /// `[CLS]` and at most `budget` pieces of `text`.
    fn pieces_after_cls(&self, text: &str, budget: usize) -> Vec<u32> {
        let mut ids = Vec::with_capacity((text.len() / 3 + 2).min(budget + 2));
        ids.push(self.cls);
        let mut rest = text;
        while !rest.is_empty() && ids.len() <= budget {
            match self.next_special(rest) {
                Some((at, len, id)) => {
                    self.encode_plain(&rest[..at], &mut ids, budget);
                    if ids.len() <= budget {
                        ids.push(id);
                    }
                    rest = &rest[at + len..];
                }
                None => {
                    self.encode_plain(rest, &mut ids, budget);
                    rest = "";
                }
            }
        }
        ids.truncate(budget + 1);
        ids
    }

    /// The leftmost special token in `text`: its byte offset, length and id.
    fn next_special(&self, text: &str) -> Option<(usize, usize, u32)> {
        // Every special token of BERT starts with '['; most texts have none.
        if self.special.is_empty() || !text.contains('[') {
            return None;
        }
        let mut best: Option<(usize, usize, u32)> = None;
        for (content, id) in &self.special {
            if let Some(at) = text.find(&**content)
                && best.is_none_or(|(b, _, _)| at < b)
            {
                best = Some((at, content.len(), *id));
            }
        }
        best
    }

    /// Normalises, splits and WordPiece-encodes `text` onto `ids`, stopping
    /// once `ids` holds more than `budget` tokens after `[CLS]`.
    fn encode_plain(&self, text: &str, ids: &mut Vec<u32>, budget: usize) {
        let normalized = normalize(text);
        let mut word_start: Option<usize> = None;
        for (i, c) in normalized.char_indices() {
            if ids.len() > budget {
                return;
            }
            let is_space = c.is_whitespace();
            let is_punct = !is_space && is_punctuation(c);
            if is_space || is_punct {
                if let Some(start) = word_start.take() {
                    self.encode_word(&normalized[start..i], ids);
                }
                if is_punct {
                    self.encode_word(&normalized[i..i + c.len_utf8()], ids);
                }
            } else if word_start.is_none() {
                word_start = Some(i);
            }
        }
        if let Some(start) = word_start
            && ids.len() <= budget
        {
            self.encode_word(&normalized[start..], ids);
        }
    }

    /// Greedy longest-match WordPiece of one word.
    fn encode_word(&self, word: &str, ids: &mut Vec<u32>) {
        if word.chars().count() > self.max_chars_per_word {
            ids.push(self.unk);
            return;
        }
        let first = ids.len();
        let mut start = 0;
        while start < word.len() {
            let pieces = if start == 0 {
                &self.word_starts
            } else {
                &self.continuations
            };
            let mut end = word.len();
            let mut found = None;
            while start < end {
                let candidate = &word[start..end];
                if let Some(&id) = pieces.get(candidate) {
                    found = Some(id);
                    break;
                }
                end -= candidate.chars().next_back().map_or(1, char::len_utf8);
            }
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    // One unknown stretch makes the whole word unknown, as in BERT.
                    ids.truncate(first);
                    ids.push(self.unk);
                    return;
                }
            }
        }
    }
}

/// BERT's normalisation: clean, space out CJK, strip accents, lower-case.
fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            cleaned.push(' ');
        } else if is_cjk_ideograph(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    if cleaned.is_ascii() {
        // Nothing to decompose; the common case for chat text.
        cleaned.make_ascii_lowercase();
        return cleaned;
    }
    let mut out = String::with_capacity(cleaned.len());
    for c in cleaned.nfd().filter(|c| !c.is_mark_nonspacing()) {
        // Character by character, as `tokenizers` does: a final sigma stays σ.
        out.extend(c.to_lowercase());
    }
    out
}

/// Tab, newline and carriage return count as whitespace, not control.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Control, format and private-use characters (Cc, Cf, Co), which BERT drops.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// ASCII symbols count as punctuation too, as in BERT (`$`, `+`, `^`, …).
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// The CJK ideograph blocks BERT splits character by character (not kana or hangul).
fn is_cjk_ideograph(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small vocabulary in the shape of BERT's, so these tests need no model files.
    const PIECES: [&str; 31] = [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "aff", "able",
        "hello", "world", "cafe", ",", "!", ".", "'", "-", "$", "3", "##5", "don", "t", "我", "京",
        "the", "##s", "a", "σ", "##ο", "##σ",
    ];

    fn tokenizer() -> anyhow::Result<WordPieceTokenizer> {
        let vocab: serde_json::Map<String, serde_json::Value> = PIECES
            .iter()
            .enumerate()
            .map(|(i, p)| (p.to_string(), serde_json::json!(i)))
            .collect();
        let json = serde_json::json!({
            "added_tokens": [
                {"id": 0, "content": "[PAD]", "special": true},
                {"id": 1, "content": "[UNK]", "special": true},
                {"id": 2, "content": "[CLS]", "special": true},
                {"id": 3, "content": "[SEP]", "special": true},
                {"id": 4, "content": "[MASK]", "special": true},
            ],
            "normalizer": {"type": "BertNormalizer", "clean_text": true,
                "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "truncation": {"max_length": 128},
            "padding": {"strategy": {"Fixed": 128}},
            "model": {"type": "WordPiece", "unk_token": "[UNK]",
                "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                "vocab": vocab},
        });
        WordPieceTokenizer::from_json(&json.to_string()).map_err(anyhow::Error::msg)
    }

    fn pieces(text: &str) -> anyhow::Result<Vec<&'static str>> {
        Ok(tokenizer()?
            .encode(text)
            .into_iter()
            .map(|id| PIECES[id as usize])
            .collect())
    }

    #[test]
    fn wraps_in_cls_and_sep_and_ignores_the_files_padding() -> anyhow::Result<()> {
        assert_eq!(pieces("")?, ["[CLS]", "[SEP]"]);
        assert_eq!(pieces("hello")?, ["[CLS]", "hello", "[SEP]"]);
        Ok(())
    }

    #[test]
    fn lower_cases_and_strips_accents() -> anyhow::Result<()> {
        assert_eq!(pieces("HeLLo Café")?, ["[CLS]", "hello", "cafe", "[SEP]"]);
        // Decomposed input (e + combining acute) ends the same way.
        assert_eq!(pieces("cafe\u{301}")?, ["[CLS]", "cafe", "[SEP]"]);
        // Sigma lower-cases character by character: no final ς.
        assert_eq!(pieces("ΣΟΣ")?, ["[CLS]", "σ", "##ο", "##σ", "[SEP]"]);
        Ok(())
    }

    #[test]
    fn isolates_punctuation_and_ascii_symbols() -> anyhow::Result<()> {
        assert_eq!(
            pieces("hello,world! don't $3.")?,
            [
                "[CLS]", "hello", ",", "world", "!", "don", "'", "t", "$", "3", ".", "[SEP]"
            ]
        );
        Ok(())
    }

    #[test]
    fn treats_all_whitespace_alike_and_drops_control_characters() -> anyhow::Result<()> {
        assert_eq!(
            pieces("\thello\n\u{3000}world\r\u{a0}")?,
            ["[CLS]", "hello", "world", "[SEP]"]
        );
        // Zero-width space (Cf), soft hyphen (Cf) and BEL (Cc) vanish, joining the word.
        assert_eq!(pieces("hel\u{200b}lo")?, ["[CLS]", "hello", "[SEP]"]);
        assert_eq!(pieces("hel\u{ad}l\u{7}o")?, ["[CLS]", "hello", "[SEP]"]);
        Ok(())
    }

    #[test]
    fn splits_cjk_ideographs() -> anyhow::Result<()> {
        assert_eq!(pieces("我京the")?, ["[CLS]", "我", "京", "the", "[SEP]"]);
        Ok(())
    }

    #[test]
    fn matches_longest_pieces_first_with_continuations() -> anyhow::Result<()> {
        assert_eq!(
            pieces("unaffable affable")?,
            ["[CLS]", "un", "##aff", "##able", "aff", "##able", "[SEP]"]
        );
        assert_eq!(pieces("35")?, ["[CLS]", "3", "##5", "[SEP]"]);
        // "##3" is not a piece, so "3535" cannot be covered.
        assert_eq!(pieces("3535")?, ["[CLS]", "[UNK]", "[SEP]"]);
        Ok(())
    }

    #[test]
    fn unknown_words_become_one_unk() -> anyhow::Result<()> {
        // "un" matches, but "##x" does not: the whole word is unknown.
        assert_eq!(pieces("unx the")?, ["[CLS]", "[UNK]", "the", "[SEP]"]);
        assert_eq!(pieces("🤖 hello")?, ["[CLS]", "[UNK]", "hello", "[SEP]"]);
        // Over 100 characters is unknown without trying.
        let long = format!("{} hello", "a".repeat(101));
        assert_eq!(pieces(&long)?, ["[CLS]", "[UNK]", "hello", "[SEP]"]);
        assert_eq!(pieces(&"a".repeat(100))?.len(), 3);
        Ok(())
    }

    #[test]
    fn keeps_special_tokens_written_in_the_text() -> anyhow::Result<()> {
        assert_eq!(
            pieces("[MASK] hello[SEP]the")?,
            ["[CLS]", "[MASK]", "hello", "[SEP]", "the", "[SEP]"]
        );
        // Matched verbatim, before normalisation: lower case is ordinary text.
        assert_eq!(
            pieces("[mask]")?,
            ["[CLS]", "[UNK]", "[UNK]", "[UNK]", "[SEP]"]
        );
        Ok(())
    }

    #[test]
    fn truncates_to_the_limit_and_ends_with_sep() -> anyhow::Result<()> {
        let t = tokenizer()?;
        let ids = t.encode(&"hello ".repeat(1000));
        assert_eq!(ids.len(), MAX_TOKENS);
        assert_eq!(ids[0], 2);
        assert_eq!(ids[MAX_TOKENS - 1], 3);
        assert!(ids[1..MAX_TOKENS - 1].iter().all(|&id| id == 10));

        let short = t.with_max_tokens(4);
        assert_eq!(short.encode("hello world the a"), [2, 10, 11, 3]);
        // A word split into pieces is cut between its pieces.
        assert_eq!(short.encode("unaffable"), [2, 5, 6, 3]);
        assert_eq!(short.encode("hello [MASK] world"), [2, 10, 4, 3]);
        Ok(())
    }

    #[test]
    fn long_texts_become_overlapping_full_windows() -> anyhow::Result<()> {
        let t = tokenizer()?.with_max_tokens(6); // 4 pieces a window
        // A text that fits is one window, the same as encode's.
        assert_eq!(
            t.encode_windows("hello world", 2, 8),
            [t.encode("hello world")]
        );
        // 7 pieces (ids 25, 27, 10, 11, 25, 27, 10), step 2: windows at 0
        // and 2, then the last 4; every window is [CLS] + 4 + [SEP].
        let text = "the a hello world the a hello";
        let windows = t.encode_windows(text, 2, 8);
        assert_eq!(
            windows,
            [
                vec![2, 25, 27, 10, 11, 3],
                vec![2, 10, 11, 25, 27, 3],
                vec![2, 11, 25, 27, 10, 3],
            ]
        );
        // Capped: two windows read the first 6 pieces only.
        assert_eq!(
            t.encode_windows(text, 2, 2),
            [windows[0].clone(), vec![2, 10, 11, 25, 27, 3]]
        );
        // No overlap: windows side by side; an overlap as long as a window
        // still moves on.
        assert_eq!(t.encode_windows(text, 0, 8).len(), 2);
        assert_eq!(t.encode_windows(text, 9, 8).len(), 4);
        Ok(())
    }

    #[test]
    fn refuses_other_tokenizers() {
        let bpe = WordPieceTokenizer::from_json(r#"{"model": {"type": "BPE"}}"#);
        assert!(bpe.is_err());
        let cased = r#"{"normalizer": {"type": "BertNormalizer", "lowercase": false},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {}}}"#;
        let err = WordPieceTokenizer::from_json(cased)
            .err()
            .unwrap_or_default();
        assert!(err.contains("lower-casing"), "{err}");
    }
}
