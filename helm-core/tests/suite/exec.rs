//! Commands in a channel's computer: where they run, what they see, how
//! they end.

use std::time::{Duration, Instant};

use helm_core::ErrorKind;
use helm_core::exec::{CommandSpec, Executor, Isolation, IsolationChoice};
use helm_core::model::ChannelRef;

use super::kit::{CONFINED_MODES, Fixture, LAUNCH_PURPOSE};

async fn launch(f: &Fixture) -> anyhow::Result<ChannelRef> {
    let record = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    Ok(ChannelRef::Id(record.channel.id))
}

#[tokio::test]
async fn bubblewrap_commands_start_in_workspace_as_an_unprivileged_agent() -> anyhow::Result<()> {
    let f = Fixture::with_isolation(IsolationChoice::Bubblewrap).await?;
    let channel = launch(&f).await?;
    let result = f
        .helm
        .exec(
            &f.captain,
            &channel,
            CommandSpec::new("pwd; echo \"$HOME\"; id -u; whoami; hostname; echo oops >&2; exit 3"),
        )
        .await?;
    assert_eq!(result.isolation, Isolation::Bubblewrap);
    assert_eq!(result.exit_code, Some(3));
    let lines: Vec<&str> = result.stdout.lines().collect();
    assert_eq!(lines[0], "/workspace", "{}", result.stdout);
    assert_eq!(lines[1], "/workspace");
    assert_ne!(lines[2], "0", "the agent is never root");
    assert_eq!(lines[3], "agent");
    assert_eq!(lines[4], "launch");
    assert_eq!(result.stderr, "oops\n");
    assert!(!result.truncated && !result.timed_out);
    Ok(())
}
