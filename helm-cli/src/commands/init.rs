//! `1helm init`.

use anyhow::Result;
use helm_core::{Helm, InitOptions};
use serde_json::json;

use super::Ctx;
use crate::cli::InitArgs;
use crate::exit;

pub async fn run(ctx: &Ctx, args: InitArgs) -> Result<i32> {
    if ctx.global.server.is_some() {
        return Err(helm_core::Error::invalid(
            "init",
            "a server initialises its own data directory; init works on a local one",
        )
        .into());
    }
    let _lock = helm_core::lock::DataLock::command(&ctx.global.data)?;
    let options = crate::backend::resolved_options(
        &ctx.global.data,
        ctx.global.isolation,
        ctx.global.embedder,
    )?;
    let (helm, report) = Helm::init(
        options,
        InitOptions {
            workspace_name: args.workspace,
            captain_name: args.captain,
        },
    )
    .await?;
    let dir = helm.data_root().path().display().to_string();
    let value = json!({
        "created": report.created,
        "data_dir": dir,
        "workspace": report.workspace,
        "captain": report.captain,
    });
    ctx.out.print(&value, || {
        if report.created {
            format!(
                "Initialised workspace {:?} in {dir}.\nCaptain: {}\n#main is ready with @skipper.\n\
                 Next: 1helm channel create NAME --purpose \"what it is all about\"",
                report.workspace.name, report.captain.name
            )
        } else {
            format!(
                "Workspace {:?} in {dir} was already initialised; nothing changed.",
                report.workspace.name
            )
        }
    })?;
    Ok(exit::OK)
}
