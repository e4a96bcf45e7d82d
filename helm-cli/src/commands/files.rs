//! `1helm files …`: a channel's workspace, as its agent sees it (paths are
//! `/workspace/...` or relative to it).

use std::io::Write;

use anyhow::Result;
use helm_core::Error;
use helm_core::exec::{FileEntry, FileKind};

use super::Ctx;
use crate::cli::FilesCommand;
use crate::exit;
use crate::output::table;

/// `files cat` prints at most this much (the rest is for `1helm exec`).
const CAT_LIMIT: usize = 64 * 1024 * 1024;

pub async fn run(ctx: &Ctx, cmd: FilesCommand) -> Result<i32> {
    let backend = ctx.backend().await?;
    match cmd {
        FilesCommand::Ls { channel, path } => {
            let entries = backend.list_files(&channel, &path).await?;
            ctx.out.print(&entries, || {
                let rows: Vec<Vec<String>> = entries.iter().map(row).collect();
                table(&["NAME", "KIND", "SIZE", "MODIFIED"], &rows)
            })?;
        }
        FilesCommand::Cat { channel, path } => {
            if ctx.global.json {
                let text = backend.read_text(&channel, &path).await?;
                ctx.out.print(&text, String::new)?;
            } else {
                let read = backend.read_bytes(&channel, &path, CAT_LIMIT).await?;
                let mut out = std::io::stdout().lock();
                out.write_all(&read.bytes)?;
                out.flush()?;
                if read.truncated {
                    writeln!(
                        std::io::stderr(),
                        "note: {} has {} bytes; printed the first {CAT_LIMIT}",
                        read.path,
                        read.size
                    )?;
                }
            }
        }
        FilesCommand::Put {
            channel,
            local,
            path,
            new,
        } => {
            let bytes = std::fs::read(&local).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Error::not_found("local file", local.display()),
                _ => Error::io("reading", &local, e),
            })?;
            let name = local
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| Error::invalid("local file", "name a file, not a directory"))?;
            // No PATH: the workspace, under the local name; a PATH ending in
            // `/` or naming a directory keeps the name; else PATH is the file.
            let dest = match path {
                None => name,
                Some(p) if p.ends_with('/') => format!("{p}{name}"),
                Some(p) => match backend.stat_file(&channel, &p).await {
                    Ok(entry) if entry.kind == FileKind::Dir => format!("{p}/{name}"),
                    _ => p,
                },
            };
            let entry = backend.put_file(&channel, &dest, bytes, new).await?;
            ctx.out.print(&entry, || {
                format!(
                    "Copied {} to {} ({} bytes).",
                    local.display(),
                    entry.path,
                    entry.size
                )
            })?;
        }
    }
    Ok(exit::OK)
}

fn row(entry: &FileEntry) -> Vec<String> {
    let kind = match (&entry.kind, &entry.link_target) {
        (FileKind::Symlink, Some(target)) => format!("link -> {target}"),
        (FileKind::File, _) => "file".into(),
        (FileKind::Dir, _) => "dir".into(),
        (FileKind::Symlink, None) => "link".into(),
        (FileKind::Other, _) => "other".into(),
    };
    let name = if entry.kind == FileKind::Dir {
        format!("{}/", entry.name)
    } else {
        entry.name.clone()
    };
    let modified = entry
        .modified
        .map(|t| t.strftime("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default();
    vec![name, kind, entry.size.to_string(), modified]
}
