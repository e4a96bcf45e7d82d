//! Embedding Helm in a Rust application: open a data directory, create a
//! channel, and read back its resident agent.
//!
//! `cargo run -p helm-examples --example embed [DATA_DIR]`

use helm_core::model::ChannelRef;
use helm_core::store::ChannelFilter;
use helm_core::{Helm, HelmOptions, InitOptions};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let scratch = tempfile_dir()?;
    let data = std::env::args().nth(1).map(Into::into).unwrap_or(scratch);
    let (helm, report) = Helm::init(HelmOptions::new(&data), InitOptions::default()).await?;
    let captain = report.captain;

    let launch: ChannelRef = "launch".parse()?;
    let record = match helm.channel(&launch).await {
        Ok(existing) => existing,
        Err(_) => {
            helm.create_channel(
                &captain,
                "launch",
                "This channel owns planning and coordinating the product launch.",
            )
            .await?
        }
    };
    let world = helm.data_root().world(record.channel.id);
    println!(
        "{} has {} ({}); its workspace is {}",
        record.channel.name,
        record.agent.handle,
        record.agent.status,
        world.workspace().display()
    );
    for r in helm.channels(ChannelFilter::default()).await? {
        println!("  {:<12} {}", r.channel.name.to_string(), r.agent.handle);
    }
    Ok(())
}

fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("helm-embed-{}", std::process::id()));
    Ok(dir)
}
