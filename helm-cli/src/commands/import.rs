//! `1helm import CHANNEL FILE.jsonl`.

use std::io::{BufRead, BufReader, Write};

use anyhow::Result;
use serde_json::json;

use super::Ctx;
use crate::cli::ImportArgs;
use crate::exit;

pub async fn run(ctx: &Ctx, args: ImportArgs) -> Result<i32> {
    let backend = ctx.backend().await?;
    let history: Box<dyn BufRead + Send> = if args.file == "-" {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut text)?;
        Box::new(std::io::Cursor::new(text))
    } else {
        if std::path::Path::new(&args.file).is_dir() {
            return Err(helm_core::Error::invalid(
                "history file",
                format!("{} is a directory; name a JSON Lines file", args.file),
            )
            .into());
        }
        let file = std::fs::File::open(&args.file).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => helm_core::Error::not_found("history file", &args.file),
            _ => helm_core::Error::io("opening the history file", &args.file, e),
        })?;
        Box::new(BufReader::new(file))
    };
    let json = ctx.out_is_json();
    let mut progress = |done: u64, total: u64| {
        if !json {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\rindexing meaning: {done}/{total}");
            let _ = err.flush();
        }
    };
    let imported = backend
        .import_history(&args.channel, history, !args.no_embed, &mut progress)
        .await?;
    if !json && imported.embedded > 0 {
        eprintln!();
    }
    let report = imported.report;
    let value = json!({
        "imported": report,
        "seconds": imported.seconds,
        "embedded": imported.embedded,
    });
    ctx.out.print(&value, || {
        let mut text = format!(
            "Imported {} threads, {} messages and {} memory records into {} in {:.2} s.",
            report.threads, report.messages, report.memories, args.channel, imported.seconds
        );
        if imported.indexed_by_server {
            text.push_str(" The server indexes them for meaning in the background.");
        }
        text
    })?;
    Ok(exit::OK)
}
