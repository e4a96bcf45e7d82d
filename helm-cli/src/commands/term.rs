//! `1helm term CHANNEL`: an interactive terminal in a channel's computer,
//! attached to this terminal (raw mode, restored on exit; resizes follow).

use std::io::{Read, Write};

use anyhow::Result;
use helm_core::Error;
use helm_core::exec::{TerminalEvent, TerminalSize};
use helm_core::model::ChannelRef;
use rustix::termios::{OptionalActions, Termios, isatty, tcgetattr, tcgetwinsize, tcsetattr};
use tokio::sync::broadcast::error::RecvError;

use super::Ctx;
use crate::cli::TermArgs;

pub async fn run(ctx: &Ctx, args: TermArgs) -> Result<i32> {
    if !isatty(std::io::stdin()) {
        return Err(Error::invalid(
            "terminal",
            "stdin is not a terminal: run `1helm term` from an interactive shell, or use \
             `1helm exec CHANNEL -- CMD` to run a command",
        )
        .into());
    }
    let local = ctx.local("term").await?;
    let helm = local.helm();
    let actor = local.actor().clone();
    let channel = args.channel.parse::<ChannelRef>()?;
    let session = helm.open_terminal(&actor, &channel, current_size()).await?;
    let mut view = session.subscribe();
    let raw = RawMode::enter()?;

    // Keystrokes come from a plain thread: reading stdin blocks.
    let (keys_tx, mut keys) = tokio::sync::mpsc::channel::<Vec<u8>>(64);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 4096];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if keys_tx.blocking_send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut resized =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())?;

    let mut out = std::io::stdout();
    out.write_all(&view.scrollback)?;
    out.flush()?;
    let code = loop {
        tokio::select! {
            event = view.events.recv() => match event {
                Ok(TerminalEvent::Output { data }) => {
                    out.write_all(&data)?;
                    out.flush()?;
                }
                Ok(TerminalEvent::Closed { exit_code }) => break exit_code.unwrap_or(1),
                // Too far behind: some output was skipped; carry on live.
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break 1,
            },
            Some(bytes) = keys.recv() => session.write(&bytes).await?,
            _ = resized.recv() => {
                let _ = session.resize(current_size());
            }
        }
    };
    drop(raw);
    Ok(code.clamp(0, 255))
}

/// The size of this terminal, or 24×80 when it cannot be read.
fn current_size() -> TerminalSize {
    match tcgetwinsize(std::io::stdout()) {
        Ok(w) if w.ws_row > 0 && w.ws_col > 0 => TerminalSize {
            rows: w.ws_row,
            cols: w.ws_col,
        },
        _ => TerminalSize::default(),
    }
}

/// This terminal in raw mode (keys go to the remote shell as typed) until
/// dropped, which restores it, on every way out.
struct RawMode {
    saved: Termios,
}

impl RawMode {
    fn enter() -> Result<Self> {
        let stdin = std::io::stdin();
        let saved = tcgetattr(&stdin)?;
        let mut raw = saved.clone();
        raw.make_raw();
        tcsetattr(&stdin, OptionalActions::Now, &raw)?;
        Ok(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}
