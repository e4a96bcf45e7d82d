//! [`StoreUrl`]: which store a workspace's state lives in, as `HELM_STORE`
//! or the config file's `store` names it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where the workspace's state is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum StoreUrl {
    /// An SQLite database file (`sqlite://PATH`); a relative path is taken
    /// from the data directory.
    Sqlite(PathBuf),
    /// A PostgreSQL database (`postgres://…` or `postgresql://…`), kept as
    /// written; opened by a build with the `postgres` feature, which several
    /// nodes can share.
    Postgres(String),
}

impl StoreUrl {
    /// The default: `helm.db` in the data directory.
    pub fn default_in(data_dir: &Path) -> Self {
        StoreUrl::Sqlite(data_dir.join("helm.db"))
    }

    /// The SQLite file, with a relative path taken from `data_dir`.
    pub fn sqlite_path(&self, data_dir: &Path) -> Option<PathBuf> {
        match self {
            StoreUrl::Sqlite(path) if path.is_relative() => Some(data_dir.join(path)),
            StoreUrl::Sqlite(path) => Some(path.clone()),
            StoreUrl::Postgres(_) => None,
        }
    }
}

/// Why a store URL was not understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadStoreUrl(pub String);

impl fmt::Display for BadStoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadStoreUrl {}

impl FromStr for StoreUrl {
    type Err = BadStoreUrl;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let input = input.trim();
        if let Some(path) = input.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(BadStoreUrl(
                    "sqlite:// needs a file path, such as sqlite:///var/lib/helm/helm.db".into(),
                ));
            }
            return Ok(StoreUrl::Sqlite(PathBuf::from(path)));
        }
        if let Some(rest) = input
            .strip_prefix("postgres://")
            .or_else(|| input.strip_prefix("postgresql://"))
        {
            if rest.is_empty() {
                return Err(BadStoreUrl(
                    "postgres:// needs a host and database, such as postgres://helm@db/helm".into(),
                ));
            }
            return Ok(StoreUrl::Postgres(input.to_string()));
        }
        Err(BadStoreUrl(format!(
            "{input:?} is not a store URL: use sqlite://PATH or postgres://USER@HOST/DATABASE"
        )))
    }
}

impl TryFrom<String> for StoreUrl {
    type Error = BadStoreUrl;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<StoreUrl> for String {
    fn from(url: StoreUrl) -> String {
        match url {
            StoreUrl::Sqlite(path) => format!("sqlite://{}", path.display()),
            StoreUrl::Postgres(url) => url,
        }
    }
}

impl fmt::Display for StoreUrl {
    /// The URL with any password hidden, for logs and errors.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            StoreUrl::Postgres(url) => f.write_str(&hide_password(url)),
        }
    }
}

/// `postgres://user:secret@host/db` as `postgres://user:***@host/db`.
fn hide_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((userinfo, host)) = rest.split_once('@') else {
        return url.to_string();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_and_postgres_urls_parse_and_others_are_refused() {
        assert_eq!(
            "sqlite:///srv/helm.db".parse(),
            Ok(StoreUrl::Sqlite(PathBuf::from("/srv/helm.db")))
        );
        let relative: StoreUrl = "sqlite://state/helm.db"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            relative.sqlite_path(Path::new("/data")),
            Some(PathBuf::from("/data/state/helm.db"))
        );
        let pg: StoreUrl = "postgresql://helm:s3cret@db:5432/helm"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(pg, StoreUrl::Postgres(_)));
        assert_eq!(pg.to_string(), "postgresql://helm:***@db:5432/helm");
        assert_eq!(String::from(pg), "postgresql://helm:s3cret@db:5432/helm");
        for bad in ["mysql://x/y", "helm.db", "sqlite://", "postgres://"] {
            assert!(bad.parse::<StoreUrl>().is_err(), "{bad}");
        }
    }
}
