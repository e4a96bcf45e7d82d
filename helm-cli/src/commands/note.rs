//! `1helm note CHANNEL [TEXT]`: saves a quick note as a new Markdown file
//! in the channel's `/workspace/notes`, as the web UI's Quick Note does.

use std::io::Read;

use anyhow::Result;
use helm_core::{Error, NewNote};

use super::Ctx;
use crate::cli::NoteArgs;
use crate::exit;

pub async fn run(ctx: &Ctx, args: NoteArgs) -> Result<i32> {
    let text = match args.text.as_deref() {
        Some("-") | None => {
            // Waiting on a terminal for text nobody announced would look
            // like a hang: say how to give it instead.
            if args.text.is_none() && rustix::termios::isatty(std::io::stdin()) {
                return Err(Error::invalid(
                    "text",
                    "give the note's text after the channel, or pipe it in (`-` reads standard input)",
                )
                .into());
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| {
                Error::invalid("text", format!("standard input is not UTF-8 text: {e}"))
            })?;
            text
        }
        Some(text) => text.to_string(),
    };
    let backend = ctx.backend().await?;
    let entry = backend
        .save_note(
            &args.channel,
            NewNote {
                text,
                title: args.title,
            },
        )
        .await?;
    ctx.out.print(&entry, || {
        format!("Saved {} ({} bytes).", entry.path, entry.size)
    })?;
    Ok(exit::OK)
}
