//! `1helm import CHANNEL FILE.jsonl`.

use std::io::{BufReader, Write};
use std::time::Instant;

use anyhow::Result;
use helm_core::model::ChannelRef;
use serde_json::json;

use super::Ctx;
use crate::cli::ImportArgs;
use crate::exit;

pub async fn run(ctx: &Ctx, args: ImportArgs) -> Result<i32> {
    let local = ctx.local("import").await?;
    let helm = local.helm();
    let actor = local.actor().clone();
    let channel: ChannelRef = args.channel.parse()?;
    let started = Instant::now();
    let report = if args.file == "-" {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut text)?;
        helm.import_history(&actor, &channel, std::io::Cursor::new(text))
            .await?
    } else {
        let file = std::fs::File::open(&args.file)
            .map_err(|e| helm_core::Error::io("opening the history file", &args.file, e))?;
        helm.import_history(&actor, &channel, BufReader::new(file))
            .await?
    };
    let took = started.elapsed();
    let mut embedded = 0;
    if !args.no_embed && helm.embedding_model().is_some() {
        let json = ctx.out_is_json();
        embedded = helm
            .embed_backlog(Some(&channel), |done, total| {
                if !json {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\rindexing meaning: {done}/{total}");
                    let _ = err.flush();
                }
            })
            .await?;
        if !json && embedded > 0 {
            eprintln!();
        }
    }
    let value = json!({ "imported": report, "seconds": took.as_secs_f64(), "embedded": embedded });
    ctx.out.print(&value, || {
        format!(
            "Imported {} threads, {} messages and {} memory records into {} in {:.2} s.",
            report.threads,
            report.messages,
            report.memories,
            args.channel,
            took.as_secs_f64()
        )
    })?;
    Ok(exit::OK)
}
