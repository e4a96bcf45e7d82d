//! `1helm user …`.

use anyhow::Result;
use helm_core::model::Role;

use super::Ctx;
use crate::cli::UserCommand;
use crate::exit;
use crate::output::table;

pub async fn run(ctx: &Ctx, cmd: UserCommand) -> Result<i32> {
    let helm = ctx.open().await?;
    match cmd {
        UserCommand::Add { name, role } => {
            let actor = ctx.actor(&helm).await?;
            let user = helm.add_user(&actor, &name, role.parse::<Role>()?).await?;
            ctx.out
                .print(&user, || format!("Added {} ({}).", user.name, user.role))?;
        }
        UserCommand::List => {
            let users = helm.users().await?;
            ctx.out.print(&users, || {
                let rows: Vec<Vec<String>> = users
                    .iter()
                    .map(|u| vec![u.id.to_string(), u.name.clone(), u.role.to_string()])
                    .collect();
                table(&["ID", "NAME", "ROLE"], &rows)
            })?;
        }
    }
    Ok(exit::OK)
}
