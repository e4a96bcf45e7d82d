//! `1helm exec CHANNEL -- CMD…`: one command in a channel's computer, run
//! exactly as the channel's agent would run it.

use std::io::{Read, Write};
use std::time::Duration;

use anyhow::Result;
use helm_core::Error;
use helm_core::exec::CommandSpec;
use helm_core::model::ChannelRef;

use super::Ctx;
use crate::cli::ExecArgs;
use crate::exit;

/// Output kept per stream: the CLI prints everything up to this much.
const OUTPUT_LIMIT: usize = 16 * 1024 * 1024;

/// The most piped input passed to a command.
const STDIN_LIMIT: usize = 64 * 1024 * 1024;

pub async fn run(ctx: &Ctx, args: ExecArgs) -> Result<i32> {
    let timeout = match args.timeout {
        Some(secs) if !(secs > 0.0 && secs.is_finite()) => {
            return Err(Error::invalid("timeout", "give a number of seconds above zero").into());
        }
        Some(secs) => Some(Duration::from_secs_f64(secs)),
        None => None,
    };
    let local = ctx.local("exec").await?;
    let helm = local.helm();
    let actor = local.actor().clone();
    let mut spec = CommandSpec::new(args.command.join(" "))
        .timeout(timeout)
        .output_limit(OUTPUT_LIMIT);
    // Piped input goes to the command, as with ssh; a terminal's does not.
    if !rustix::termios::isatty(std::io::stdin()) {
        let mut input = Vec::new();
        std::io::stdin()
            .lock()
            .take(STDIN_LIMIT as u64 + 1)
            .read_to_end(&mut input)?;
        if input.len() > STDIN_LIMIT {
            return Err(Error::invalid(
                "stdin",
                format!("more than {STDIN_LIMIT} bytes; put the file in the workspace instead"),
            )
            .into());
        }
        spec = spec.stdin(input);
    }
    let channel = args.channel.parse::<ChannelRef>()?;
    let result = helm.exec(&actor, &channel, spec).await?;
    let code = if result.timed_out {
        exit::TIMED_OUT
    } else {
        result.shell_status().clamp(0, 255)
    };
    if ctx.global.json {
        ctx.out.print(&result, String::new)?;
        return Ok(code);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(result.stdout.as_bytes())?;
    out.flush()?;
    let mut err = std::io::stderr().lock();
    err.write_all(result.stderr.as_bytes())?;
    if result.truncated {
        writeln!(
            err,
            "note: output truncated: showing the last {OUTPUT_LIMIT} bytes of {} (stdout) and {} (stderr)",
            result.stdout_bytes, result.stderr_bytes
        )?;
    }
    if result.timed_out {
        writeln!(
            err,
            "error: the command ran past its timeout and was killed, with everything it started"
        )?;
    }
    Ok(code)
}
