//! `1helm user …`.

use anyhow::Result;
use helm_core::PersonChange;
use helm_core::model::{Role, User};

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
                    .map(|u| {
                        vec![
                            u.id.to_string(),
                            u.name.clone(),
                            u.role.to_string(),
                            standing(u).to_string(),
                        ]
                    })
                    .collect();
                table(&["ID", "NAME", "ROLE", "STATUS"], &rows)
            })?;
        }
        UserCommand::SetRole { name, role } => {
            let change = PersonChange {
                role: Some(role.parse::<Role>()?),
                active: None,
            };
            let user = backend.change_person(&name, change).await?;
            ctx.out
                .print(&user, || format!("{} is now {}.", user.name, user.role))?;
        }
        UserCommand::Deactivate { name } => {
            let change = PersonChange {
                role: None,
                active: Some(false),
            };
            let user = backend.change_person(&name, change).await?;
            ctx.out.print(&user, || {
                format!(
                    "Deactivated {}: they cannot sign in, and their sessions and API tokens \
                     are refused. Their messages stay.",
                    user.name
                )
            })?;
        }
        UserCommand::Reactivate { name } => {
            let change = PersonChange {
                role: None,
                active: Some(true),
            };
            let user = backend.change_person(&name, change).await?;
            ctx.out
                .print(&user, || format!("Reactivated {}.", user.name))?;
        }
    }
    Ok(exit::OK)
}

/// Whether a person may sign in, as `user list` shows it.
fn standing(user: &User) -> &'static str {
    if user.is_active() {
        "active"
    } else {
        "deactivated"
    }
}
