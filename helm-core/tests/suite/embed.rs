//! The local all-MiniLM-L6-v2 embedder against its published behaviour.
//!
//! These tests need the model's files: `scripts/test` fetches them first
//! (`scripts/fetch-embedding-model`). Without them the tests fail and say so,
//! rather than skip: a skipped test would hide a broken setup in CI.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, bail};
use helm_core::memory::embed::{
    Embedder, MINILM_DIMENSIONS, MINILM_MODEL_ID, MiniLmEmbedder, MiniLmOptions, TOKENIZER_FILE,
    WEIGHTS_FILE, find_local_model,
};
use helm_core::{Error, ErrorKind};

/// The model's directory, or a failure that says how to get it.
fn model_dir() -> anyhow::Result<PathBuf> {
    match find_local_model(Path::new("/nonexistent/helm-data")) {
        Some(dir) => Ok(dir),
        None => bail!(
            "all-MiniLM-L6-v2 was not found (HELM_EMBED_MODEL, <data>/models/, \
             models/ up to the repository root): run scripts/fetch-embedding-model"
        ),
    }
}

/// One embedder for the whole binary: loading reads 90 MB.
fn embedder() -> anyhow::Result<&'static MiniLmEmbedder> {
    static EMBEDDER: OnceLock<MiniLmEmbedder> = OnceLock::new();
    if let Some(e) = EMBEDDER.get() {
        return Ok(e);
    }
    let loaded = MiniLmEmbedder::load(&model_dir()?)?;
    Ok(EMBEDDER.get_or_init(|| loaded))
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn embed_one(text: &str) -> anyhow::Result<Vec<f32>> {
    embedder()?
        .embed_blocking(&[text])?
        .pop()
        .context("no vector for one text")
}

#[test]
fn tokenizes_like_the_reference_tokenizer() -> anyhow::Result<()> {
    // Ids from Hugging Face `tokenizers` on the same tokenizer.json, with
    // padding off and truncation at 256.
    let cases: &[(&str, &[u32])] = &[
        (
            "A man is eating food.",
            &[101, 1037, 2158, 2003, 5983, 2833, 1012, 102],
        ),
        (
            "Héllo, wörld! Ça va? Naïve café — résumé.",
            &[
                101, 7592, 1010, 2088, 999, 6187, 12436, 1029, 15743, 7668, 1517, 13746, 1012, 102,
            ],
        ),
        (
            "Don't stop-believing... (really?!)",
            &[
                101, 2123, 1005, 1056, 2644, 1011, 8929, 1012, 1012, 1012, 1006, 2428, 1029, 999,
                1007, 102,
            ],
        ),
        (
            "It costs $3.50 (≈ €3) at 10:30am; e-mail me@example.com",
            &[
                101, 2009, 5366, 1002, 1017, 1012, 2753, 1006, 1606, 1574, 2509, 1007, 2012, 2184,
                1024, 2382, 3286, 1025, 1041, 1011, 5653, 2033, 1030, 2742, 1012, 4012, 102,
            ],
        ),
        (
            "我爱北京天安门 and 東京",
            &[
                101, 1855, 100, 1781, 1755, 1811, 1820, 100, 1998, 1879, 1755, 102,
            ],
        ),
        (
            "tab\there\nnew line\u{200b}zero\u{ad}width\u{7}bell",
            &[
                101, 21628, 2182, 2047, 2240, 6290, 5004, 3593, 2705, 17327, 102,
            ],
        ),
        (
            "The robot 🤖 said ☃ unaffable xqzvwjkp",
            &[
                101, 1996, 8957, 100, 2056, 100, 14477, 20961, 3468, 1060, 4160, 2480, 2615, 2860,
                15992, 2361, 102,
            ],
        ),
        (
            "[CLS] hello [MASK] world [SEP]",
            &[101, 101, 7592, 103, 2088, 102, 102],
        ),
        (
            "ΣΊΣΥΦΟΣ İstanbul Straße",
            &[
                101, 1173, 18199, 29733, 29735, 29736, 29730, 29733, 9960, 2358, 27807, 102,
            ],
        ),
        ("", &[101, 102]),
    ];
    let tokenizer = embedder()?.tokenizer()?;
    for (text, want) in cases {
        assert_eq!(tokenizer.encode(text), *want, "tokens of {text:?}");
    }
    Ok(())
}

#[test]
fn one_sequence_is_cut_at_256_tokens() -> anyhow::Result<()> {
    let tokenizer = embedder()?.tokenizer()?;
    let ids = tokenizer.encode(&["word"; 300].join(" "));
    assert_eq!(ids.len(), 256);
    assert_eq!(&ids[..3], [101, 2773, 2773]);
    assert_eq!(&ids[253..], [2773, 2773, 102]);
    // 101 characters is over WordPiece's word limit: one [UNK].
    let ids = tokenizer.encode(&format!("{} ok", "a".repeat(101)));
    assert_eq!(ids, [101, 100, 7929, 102]);
    Ok(())
}

#[test]
fn a_long_text_is_read_to_its_end() -> anyhow::Result<()> {
    // About 330 pieces on the offsite's catering, then one sentence on
    // something else: past the model's 256 tokens, where a text used to be cut.
    let catering = "For the offsite lunch we ordered sandwiches, two salads and a fruit \
                    platter from the bakery on the corner; the vegetarian options arrive \
                    separately and the coffee urns are collected on Monday morning. ";
    let tail = "Separately: Priya rotates the production deploy key every Friday.";
    let long = format!("{}{tail}", catering.repeat(8));
    let tokenizer = embedder()?.tokenizer()?;
    assert!(
        tokenizer.encode_windows(&long, 32, 16).len() > 1,
        "the text is one window"
    );
    let head = tokenizer.encode(&long);
    assert!(
        !head.ends_with(&tokenizer.encode(tail)[1..]),
        "the tail fits in one window"
    );

    let query = embedder()?.embed_query_blocking("who rotates the production deploy key?")?;
    let vectors = embedder()?.embed_blocking(&[long.as_str(), "ok", catering])?;
    let norm: f32 = vectors[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!(
        (norm - 1.0).abs() < 1e-4,
        "a long text's vector has length {norm}"
    );
    // What the embedder read of it when it cut at 256 tokens: six of the
    // eight paragraphs fill one sequence.
    let six = catering.repeat(6);
    assert_eq!(tokenizer.encode_windows(&six, 32, 16).len(), 1);
    let start = embed_one(&six)?;
    let (whole, cut) = (cosine(&query, &vectors[0]), cosine(&query, &start));
    assert!(
        whole > cut + 0.1,
        "the tail is not found: {whole} against {cut} for the start"
    );
    // Still about the catering, and the texts beside it are untouched.
    assert!(cosine(&vectors[0], &vectors[2]) > 0.7);
    assert!(cosine(&vectors[1], &embed_one("ok")?) > 0.9999);
    assert!(cosine(&vectors[2], &embed_one(catering)?) > 0.9999);
    Ok(())
}

#[test]
fn reproduces_the_published_similarity() -> anyhow::Result<()> {
    let food = embed_one("A man is eating food.")?;
    let bread = embed_one("A man is eating a piece of bread.")?;
    let baby = embed_one("The girl is carrying a baby.")?;
    let violin = embed_one("A woman is playing violin.")?;

    // sentence-transformers' documented value for this pair, also what the
    // numpy reference forward pass gives.
    let related = cosine(&food, &bread);
    assert!(
        (related - 0.7553).abs() <= 0.005,
        "cosine(food, bread) = {related}, expected 0.7553"
    );
    for (name, other, reference) in [("baby", &baby, -0.1050), ("violin", &violin, -0.0704)] {
        let unrelated = cosine(&food, other);
        assert!(
            (unrelated - reference).abs() <= 0.005,
            "cosine(food, {name}) = {unrelated}, expected {reference}"
        );
        assert!(related - unrelated > 0.6, "{name} is not much less similar");
    }
    // The first components, against the numpy reference: the same vector, not just the same angle.
    let reference = [
        0.033_241_57,
        0.004_406_07,
        -0.006_276_95,
        0.048_378_72,
        -0.138_702_26,
    ];
    for (i, (got, want)) in food.iter().zip(reference).enumerate() {
        assert!((got - want).abs() < 1e-4, "component {i}: {got} vs {want}");
    }
    Ok(())
}

#[test]
fn batches_agree_with_single_texts_and_keep_their_order() -> anyhow::Result<()> {
    let texts = [
        "Deploy is blocked on the database migration.",
        "ok",
        "Can we move the standup to 10:30 tomorrow? Half the team is travelling and the \
         earlier slot clashes with the airport run.",
        "The staging cluster ran out of disk again last night.",
        "",
        "Merci, c'est réglé !",
        "Remember that Alice prefers email over chat for anything about contracts.",
    ];
    let dir = model_dir()?;
    // Batches of 3 split the 7 texts into padded chunks of mixed lengths.
    let small_batches = MiniLmEmbedder::load_with(&dir, MiniLmOptions::default().max_batch(3))?;
    let batched = small_batches.embed_blocking(&texts)?;
    let whole = embedder()?.embed_blocking(&texts)?;
    assert_eq!(batched.len(), texts.len());
    for (i, text) in texts.iter().enumerate() {
        let single = embed_one(text)?;
        let a = cosine(&batched[i], &single);
        let b = cosine(&whole[i], &single);
        assert!(a > 0.9999 && b > 0.9999, "{text:?}: batch cosines {a}, {b}");
    }
    Ok(())
}

#[tokio::test]
async fn a_query_is_embedded_within_a_hair_of_an_item() -> anyhow::Result<()> {
    let embedder = embedder()?;
    let questions = [
        "What did we decide about the logo?",
        "When did Caroline go to the LGBTQ support group?",
        "?",
        "Héllo, wörld! Ça va? Naïve café — résumé.",
        // Over 32 tokens: embedded exactly as an item is.
        "Could you remind me what the three of us agreed on Tuesday about the launch date, \
         the budget for the offsite, and who takes the vendor review while Alice is out?",
    ];
    for question in questions {
        let exact = embed_one(question)?;
        let query = embedder.embed_query_blocking(question)?;
        let through_the_port = Embedder::embed_query(embedder, question).await?;
        assert_eq!(query, through_the_port, "{question:?}");
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{question:?}: norm {norm}");
        let c = cosine(&query, &exact);
        assert!(c > 0.9995, "{question:?}: cosine {c} to the exact vector");
        if embedder.tokenizer()?.encode(question).len() > 32 {
            assert_eq!(query, exact, "a long query is embedded as an item is");
        } else {
            assert_ne!(
                query, exact,
                "a short query is embedded by the rounded weights"
            );
        }
    }
    // The published pair, with the question's side embedded as a query.
    let food = embedder.embed_query_blocking("A man is eating food.")?;
    let related = cosine(&food, &embed_one("A man is eating a piece of bread.")?);
    assert!((related - 0.7553).abs() <= 0.005, "cosine {related}");
    Ok(())
}

#[tokio::test]
async fn the_embedder_port_gives_unit_vectors_of_384() -> anyhow::Result<()> {
    let embedder: &dyn Embedder = embedder()?;
    assert_eq!(embedder.model(), MINILM_MODEL_ID);
    assert_eq!(embedder.model(), "all-MiniLM-L6-v2");
    assert_eq!(embedder.dimensions(), 384);
    assert_eq!(MINILM_DIMENSIONS, 384);

    let texts: Vec<String> = [
        "What did we decide about the logo?",
        "🤖",
        "a b c",
        &"long ".repeat(400),
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    let vectors = embedder.embed(&texts).await?;
    assert_eq!(vectors.len(), texts.len());
    for v in &vectors {
        assert_eq!(v.len(), 384);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
    }
    assert!(embedder.embed(&[]).await?.is_empty());
    Ok(())
}

#[test]
fn the_thread_count_is_respected() -> anyhow::Result<()> {
    let one = MiniLmEmbedder::load_with(&model_dir()?, MiniLmOptions::default().threads(1))?;
    assert_eq!(one.threads()?, 1);
    let text = "Who is on call this weekend?";
    let v = one.embed_blocking(&[text])?;
    assert!(cosine(&v[0], &embed_one(text)?) > 0.9999);
    let default_threads = std::thread::available_parallelism()?.get();
    assert_eq!(embedder()?.threads()?, default_threads);
    Ok(())
}

#[test]
fn missing_files_are_named_with_the_way_to_get_them() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let Err(err) = MiniLmEmbedder::load(tmp.path()) else {
        bail!("loaded a model from an empty directory");
    };
    let Error::ModelMissing { path, .. } = &err else {
        bail!("expected ModelMissing, got {err:?}");
    };
    assert_eq!(path, &tmp.path().join(WEIGHTS_FILE));
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    let message = err.to_string();
    assert!(message.contains("model.safetensors"), "{message}");
    assert!(
        message.contains("scripts/fetch-embedding-model"),
        "{message}"
    );

    // With the weights alone, the tokenizer is what is missing.
    std::fs::write(tmp.path().join(WEIGHTS_FILE), b"not read")?;
    let Err(Error::ModelMissing { path, .. }) = MiniLmEmbedder::load(tmp.path()) else {
        bail!("loaded a model without its tokenizer");
    };
    assert_eq!(path, tmp.path().join(TOKENIZER_FILE));
    Ok(())
}

#[test]
fn damaged_weights_are_refused_clearly() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    std::fs::copy(
        model_dir()?.join(TOKENIZER_FILE),
        tmp.path().join(TOKENIZER_FILE),
    )?;
    std::fs::write(
        tmp.path().join(WEIGHTS_FILE),
        b"\x08\0\0\0\0\0\0\0{}garbage",
    )?;
    for opened in [
        MiniLmEmbedder::load(tmp.path()),
        MiniLmEmbedder::open(tmp.path()),
    ] {
        let Err(err) = opened else {
            bail!("took garbage weights");
        };
        assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
        assert!(err.to_string().contains("model.safetensors"), "{err}");
    }

    // Another model's file is refused by its header, before any tensor is read.
    let header = br#"{"lm_head.weight":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
    let mut other = (header.len() as u64).to_le_bytes().to_vec();
    other.extend_from_slice(header);
    other.extend_from_slice(&[0; 4]);
    std::fs::write(tmp.path().join(WEIGHTS_FILE), other)?;
    let Err(err) = MiniLmEmbedder::open(tmp.path()) else {
        bail!("opened another model's weights");
    };
    assert!(err.to_string().contains("no word embeddings"), "{err}");

    // Weights cut short (a broken download) are refused when opened, as a
    // configuration that requires the model must refuse to start on them.
    let weights = std::fs::read(model_dir()?.join(WEIGHTS_FILE))?;
    std::fs::write(tmp.path().join(WEIGHTS_FILE), &weights[..weights.len() / 2])?;
    let Err(err) = MiniLmEmbedder::open(tmp.path()) else {
        bail!("opened half the weights");
    };
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
    assert!(err.to_string().contains("download it again"), "{err}");

    // Whole weights missing a tensor the model needs (one renamed in the
    // header, so the file still adds up) open, and fail the embedding that
    // reads them, clearly, every time.
    let header_end = 8 + u64::from_le_bytes(weights[..8].try_into()?) as usize;
    let mut renamed = weights.clone();
    let header = &mut renamed[8..header_end];
    let at = header
        .windows(12)
        .position(|w| w == b"query.weight")
        .context("no query weights in the model's header")?;
    header[at..at + 12].copy_from_slice(b"qvery.weight");
    std::fs::write(tmp.path().join(WEIGHTS_FILE), &renamed)?;
    let opened = MiniLmEmbedder::open(tmp.path())?;
    for _ in 0..2 {
        let Err(err) = opened.embed_blocking(&["hello"]) else {
            bail!("embedded without the query weights");
        };
        assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
        assert!(err.to_string().contains("query"), "{err}");
    }
    Ok(())
}

#[tokio::test]
async fn an_opened_model_is_read_on_its_first_embedding() -> anyhow::Result<()> {
    let opened = MiniLmEmbedder::open(&model_dir()?)?;
    assert!(!opened.is_loaded());
    let text = "Who is on call this weekend?";
    // Two first callers at once load it once and agree.
    let texts = [text.to_string()];
    let (a, b) = tokio::join!(opened.embed(&texts), opened.embed(&texts));
    assert!(opened.is_loaded());
    let (a, b) = (a?, b?);
    assert_eq!(a, b);
    assert!(cosine(&a[0], &embed_one(text)?) > 0.9999);
    Ok(())
}
