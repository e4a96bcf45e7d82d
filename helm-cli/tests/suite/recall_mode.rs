//! Which recall a workspace has is never a surprise: `1helm status` says
//! by meaning with which model, or by words only and why; `1helm recall`
//! notes words-only beside its hits; `--embedder required` (or
//! `HELM_EMBEDDER=required`) refuses to work without the model.

use super::kit::run_outside;

/// The model `scripts/test` fetches, at the repository root.
const MODEL_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/all-MiniLM-L6-v2");

#[test]
fn status_says_how_recall_works_and_a_required_model_refuses_to_start() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let cwd = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&cwd)?;
    let data = tmp.path().join("data");
    let init = run_outside(&cwd, &data, &["init"], &[])?;
    assert_eq!(init.code, 0, "{}", init.stderr);

    // No model anywhere it is looked for: words only, and why.
    let status = run_outside(&cwd, &data, &["status", "--json"], &[])?.json()?;
    assert_eq!(status["recall"]["mode"], "words", "{status}");
    assert_eq!(status["recall"]["reason"], "model_not_found");
    let text = run_outside(&cwd, &data, &["status"], &[])?;
    assert!(
        text.stdout.contains(
            "Recall:    by words only: the local embedding model (all-MiniLM-L6-v2) was not found"
        ),
        "{}",
        text.stdout
    );

    // Recall still answers, and says it worked by words only.
    let create = ["channel", "create", "launch", "--purpose", "The launch."];
    assert_eq!(run_outside(&cwd, &data, &create, &[])?.code, 0);
    let recall = run_outside(&cwd, &data, &["--json", "recall", "launch", "budget"], &[])?;
    assert_eq!(recall.code, 0, "{}", recall.stderr);
    assert!(
        recall.json()?.is_array(),
        "stdout stays JSON: {}",
        recall.stdout
    );
    assert!(
        recall
            .stderr
            .contains("note: recall worked by words only: the local embedding model"),
        "{}",
        recall.stderr
    );

    // Required: refused with the reason and the way to get the model, by
    // flag or by environment; nothing is opened.
    for (args, env) in [
        (vec!["--embedder", "required", "status"], vec![]),
        (vec!["status"], vec![("HELM_EMBEDDER", "required")]),
    ] {
        let refused = run_outside(&cwd, &data, &args, &env)?;
        assert_eq!(refused.code, 6, "unavailable: {}", refused.stderr);
        assert!(
            refused.stderr.contains("requires recall by meaning")
                && refused.stderr.contains("fetch-embedding-model"),
            "{}",
            refused.stderr
        );
        assert!(refused.stdout.is_empty(), "{}", refused.stdout);
    }

    // Off: words only by choice, even where the model is.
    let off = run_outside(
        &cwd,
        &data,
        &["status", "--json"],
        &[("HELM_EMBEDDER", "off"), ("HELM_EMBED_MODEL", MODEL_DIR)],
    )?
    .json()?;
    assert_eq!(off["recall"]["reason"], "turned_off", "{off}");

    // A setting that is not one: a usage error naming the choices.
    let bad = run_outside(&cwd, &data, &["--embedder", "sometimes", "status"], &[])?;
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("required, auto, off"), "{}", bad.stderr);

    // With the model (which `scripts/test` fetches): by meaning, named;
    // required is then satisfied.
    let found = run_outside(
        &cwd,
        &data,
        &["--embedder", "required", "status", "--json"],
        &[("HELM_EMBED_MODEL", MODEL_DIR)],
    )?;
    assert_eq!(
        found.code, 0,
        "the model is missing: run scripts/fetch-embedding-model ({})",
        found.stderr
    );
    let found = found.json()?;
    assert_eq!(found["recall"]["mode"], "meaning", "{found}");
    assert_eq!(found["recall"]["model"], "all-MiniLM-L6-v2");
    Ok(())
}
