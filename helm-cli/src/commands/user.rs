//! `1helm user …`.

use anyhow::Result;
use helm_core::model::Role;

use super::Ctx;
use crate::cli::UserCommand;
use crate::exit;
use crate::output::table;

pub async fn run(ctx: &Ctx, cmd: UserCommand) -> Result<i32> {
    let backend = ctx.backend().await?;
    match cmd {
        UserCommand::Add {
            name,
            role,
            password_env,
        } => {
            let password = match password_env {
                Some(var) => Some(std::env::var(&var).map_err(|_| {
                    helm_core::Error::invalid(
                        "--password-env",
                        format!("the environment variable {var} is not set"),
                    )
                })?),
                None => None,
            };
            let user = backend
                .add_user(&name, role.parse::<Role>()?, password)
                .await?;
            ctx.out
                .print(&user, || format!("Added {} ({}).", user.name, user.role))?;
        }
        UserCommand::List => {
            let users = backend.users().await?;
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
