//! `Helm` and `AsyncHelm`: a workspace, opened in this process
//! (`open(path)`) or reached on a server (`connect(url, token)`), and its
//! `providers`. Both flavours share [`HelmCore`]; the blocking one waits
//! with the GIL released, the asyncio one returns awaitables.

use std::path::PathBuf;
use std::sync::Arc;

use helm_core::model::{Role, Visibility};
use helm_core::provider::{ApiKeyRef, ProviderConfig, ProviderKind};
use helm_core::{ErrorKind, NewChannel, PersonChange};
use pyo3::prelude::*;

use crate::backend::{Connected, Embedded, OpenOptions, SharedBackend};
use crate::channel::{AsyncChannel, Channel};
use crate::errors::{Result, failure};
use crate::provider::PyProvider;
use crate::records::{Approval, ProviderInfo, User};
use crate::runtime::{awaitable, blocking};

/// What both flavours of the workspace hold.
#[derive(Clone)]
pub struct HelmCore {
    backend: SharedBackend,
    /// Set when the workspace is open in this process.
    embedded: Option<Arc<Embedded>>,
    /// Where it lives, for `repr`.
    place: String,
}

impl HelmCore {
    fn open(py: Python<'_>, path: PathBuf, create: bool, user: Option<String>) -> PyResult<Self> {
        let place = path.display().to_string();
        let embedded = blocking(py, Embedded::open(OpenOptions { path, create, user }))?;
        let embedded = Arc::new(embedded);
        Ok(HelmCore {
            backend: embedded.clone(),
            embedded: Some(embedded),
            place,
        })
    }

    fn connect(url: &str, token: &str) -> PyResult<Self> {
        let connected = Connected::new(url, token).map_err(crate::errors::to_py)?;
        Ok(HelmCore {
            place: connected.url().to_string(),
            backend: Arc::new(connected),
            embedded: None,
        })
    }

    /// The backend the objects of this workspace share.
    pub fn backend(&self) -> &SharedBackend {
        &self.backend
    }

    /// The embedded workspace, if it is open here (the benchmark's way in).
    pub fn embedded(&self) -> Option<&Arc<Embedded>> {
        self.embedded.as_ref()
    }

    fn repr(&self, class: &str) -> String {
        format!("{class}({} {:?})", self.backend.mode(), self.place)
    }

    fn as_user_future(&self, name: String) -> impl Future<Output = Result<HelmCore>> + use<> {
        let this = self.clone();
        async move {
            let Some(embedded) = &this.embedded else {
                return Err(failure(
                    ErrorKind::Refused,
                    "as_user_remote",
                    "on a server the token decides who acts; connect with that person's token",
                ));
            };
            let other = Arc::new(embedded.as_user(&name).await?);
            Ok(HelmCore {
                backend: other.clone(),
                embedded: Some(other),
                place: this.place.clone(),
            })
        }
    }
}

/// How Python names a channel: `"launch"`, `"#launch"` or an id (`2` or `"2"`).
#[derive(FromPyObject)]
enum ChannelKey {
    Id(i64),
    Name(String),
}

impl ChannelKey {
    /// The reference the backends take (digits are an id).
    fn into_ref(self) -> String {
        match self {
            ChannelKey::Id(id) => id.to_string(),
            ChannelKey::Name(name) => name,
        }
    }
}

fn new_channel(
    name: String,
    purpose: String,
    private: bool,
    instructions: &str,
    computer: Option<String>,
) -> NewChannel {
    let mut request = NewChannel::new(name, purpose);
    request.instructions = instructions.to_string();
    request.computer = computer;
    if private {
        request.visibility = Visibility::Private;
    }
    request
}

fn role(raw: &str) -> Result<Role> {
    Ok(raw.parse::<Role>()?)
}

/// Deactivating (`false`) or reactivating (`true`).
fn access(active: bool) -> PersonChange {
    PersonChange {
        role: None,
        active: Some(active),
    }
}

/// A workspace, with blocking calls: each waits with the GIL released, and
/// Ctrl-C interrupts the wait.
#[pyclass(frozen, module = "onehelm")]
pub struct Helm {
    core: HelmCore,
}

#[pymethods]
impl Helm {
    /// Opens the data directory at `path`, in this process (no server).
    /// With `create` (the default) a directory without a workspace gets
    /// one (the Captain, `#main` and Skipper). Calls act as the Captain,
    /// or as the person named by `user`.
    #[staticmethod]
    #[pyo3(signature = (path, *, create=true, user=None))]
    fn open(py: Python<'_>, path: PathBuf, create: bool, user: Option<String>) -> PyResult<Self> {
        Ok(Helm {
            core: HelmCore::open(py, path, create, user)?,
        })
    }

    /// A running helm-http server at `url`, acting as the owner of the API
    /// `token`. Nothing is sent until the first call.
    #[staticmethod]
    fn connect(url: &str, token: &str) -> PyResult<Self> {
        Ok(Helm {
            core: HelmCore::connect(url, token)?,
        })
    }

    /// `embedded` (opened here) or `connected` (a server).
    #[getter]
    fn mode(&self) -> &'static str {
        self.core.backend.mode()
    }

    /// The person calls act as.
    fn me(&self, py: Python<'_>) -> PyResult<User> {
        let backend = self.core.backend.clone();
        blocking(py, async move { backend.me().await.map(User::from) })
    }

    /// The same workspace, acting as the person `name` (embedded only; on
    /// a server, connect with their token).
    fn as_user(&self, py: Python<'_>, name: String) -> PyResult<Helm> {
        let core = blocking(py, self.core.as_user_future(name))?;
        Ok(Helm { core })
    }

    /// Creates a channel for anything: it comes with a resident agent, a
    /// computer (`/workspace`), a memory and threads.
    #[pyo3(signature = (name, purpose, *, private=false, instructions="", computer=None))]
    fn create_channel(
        &self,
        py: Python<'_>,
        name: String,
        purpose: String,
        private: bool,
        instructions: &str,
        computer: Option<String>,
    ) -> PyResult<Channel> {
        let backend = self.core.backend.clone();
        let request = new_channel(name, purpose, private, instructions, computer);
        let record = blocking(py, {
            let backend = backend.clone();
            async move { backend.create_channel(request).await }
        })?;
        Ok(Channel::new(backend, record))
    }

    /// The channels you may see, by name (archived ones too with `archived`).
    #[pyo3(signature = (*, archived=false))]
    fn channels(&self, py: Python<'_>, archived: bool) -> PyResult<Vec<Channel>> {
        let backend = self.core.backend.clone();
        let records = blocking(py, {
            let backend = backend.clone();
            async move { backend.channels(archived).await }
        })?;
        Ok(records
            .into_iter()
            .map(|r| Channel::new(backend.clone(), r))
            .collect())
    }

    /// One channel, by name (`launch` or `#launch`) or id (an `int`, or
    /// its digits).
    fn channel(&self, py: Python<'_>, name: ChannelKey) -> PyResult<Channel> {
        let name = name.into_ref();
        let backend = self.core.backend.clone();
        let record = blocking(py, {
            let backend = backend.clone();
            async move { backend.channel(&name).await }
        })?;
        Ok(Channel::new(backend, record))
    }

    /// Sets the workspace's default model (Captain and admins): it serves
    /// every channel without a choice of its own, and Skipper in `#main`.
    /// `set_model(None)` clears it.
    #[pyo3(signature = (provider, model=None))]
    fn set_model(
        &self,
        py: Python<'_>,
        provider: Option<String>,
        model: Option<String>,
    ) -> PyResult<()> {
        let choice = crate::channel::model_choice(provider, model).map_err(crate::errors::to_py)?;
        let backend = self.core.backend.clone();
        blocking(py, async move { backend.set_workspace_model(choice).await })
    }

    /// The model providers.
    #[getter]
    fn providers(&self) -> Providers {
        Providers {
            backend: self.core.backend.clone(),
        }
    }

    /// Approval requests (only pending ones unless `pending` is false).
    #[pyo3(signature = (*, pending=true))]
    fn approvals(&self, py: Python<'_>, pending: bool) -> PyResult<Vec<Approval>> {
        let backend = self.core.backend.clone();
        blocking(py, async move {
            Ok(backend
                .approvals(pending)
                .await?
                .into_iter()
                .map(Approval::from)
                .collect())
        })
    }

    /// Approves a pending request (the Captain or an admin).
    #[pyo3(signature = (id, note=None))]
    fn approve(&self, py: Python<'_>, id: i64, note: Option<String>) -> PyResult<Approval> {
        let backend = self.core.backend.clone();
        blocking(py, async move {
            backend.decide(id, true, note).await.map(Approval::from)
        })
    }

    /// Denies a pending request (the Captain or an admin).
    #[pyo3(signature = (id, note=None))]
    fn deny(&self, py: Python<'_>, id: i64, note: Option<String>) -> PyResult<Approval> {
        let backend = self.core.backend.clone();
        blocking(py, async move {
            backend.decide(id, false, note).await.map(Approval::from)
        })
    }

    /// Adds a person (`member` or `admin`) to the workspace.
    #[pyo3(signature = (name, role="member"))]
    fn add_user(&self, py: Python<'_>, name: String, role: &str) -> PyResult<User> {
        let backend = self.core.backend.clone();
        let role = self::role(role).map_err(crate::errors::to_py)?;
        blocking(py, async move {
            backend.add_user(&name, role).await.map(User::from)
        })
    }

    /// Makes a person an admin or a member (the Captain only).
    fn set_role(&self, py: Python<'_>, name: String, role: &str) -> PyResult<User> {
        let change = PersonChange {
            role: Some(self::role(role).map_err(crate::errors::to_py)?),
            active: None,
        };
        self.change_person(py, name, change)
    }

    /// Deactivates a person: they cannot sign in, and their sessions and
    /// API tokens stop working at once; what they wrote stays.
    fn deactivate_user(&self, py: Python<'_>, name: String) -> PyResult<User> {
        self.change_person(py, name, access(false))
    }

    /// Reactivates a deactivated person.
    fn reactivate_user(&self, py: Python<'_>, name: String) -> PyResult<User> {
        self.change_person(py, name, access(true))
    }

    /// Lets go of the workspace: an embedded one stops driving turns (the
    /// running ones finish first; one waiting on an approval is stopped)
    /// and releases the data directory.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let backend = self.core.backend.clone();
        blocking(py, async move {
            backend.close().await;
            Ok(())
        })
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        self.core.repr("Helm")
    }
}

impl Helm {
    /// The shared core (the benchmark reaches the facade through it).
    pub fn core(&self) -> &HelmCore {
        &self.core
    }

    fn change_person(&self, py: Python<'_>, name: String, change: PersonChange) -> PyResult<User> {
        let backend = self.core.backend.clone();
        blocking(py, async move {
            backend.change_person(&name, change).await.map(User::from)
        })
    }
}

impl AsyncHelm {
    fn change_person<'py>(
        &self,
        py: Python<'py>,
        name: String,
        change: PersonChange,
    ) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            backend.change_person(&name, change).await.map(User::from)
        })
    }
}

/// A workspace, with asyncio calls: each returns an awaitable and runs on
/// the same shared runtime as the blocking flavour.
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncHelm {
    core: HelmCore,
}

#[pymethods]
impl AsyncHelm {
    /// Opens the data directory at `path` in this process (see
    /// `Helm.open`). Opening is quick local work and happens at once.
    #[staticmethod]
    #[pyo3(signature = (path, *, create=true, user=None))]
    fn open(py: Python<'_>, path: PathBuf, create: bool, user: Option<String>) -> PyResult<Self> {
        Ok(AsyncHelm {
            core: HelmCore::open(py, path, create, user)?,
        })
    }

    /// A running helm-http server at `url`, acting as the owner of `token`.
    #[staticmethod]
    fn connect(url: &str, token: &str) -> PyResult<Self> {
        Ok(AsyncHelm {
            core: HelmCore::connect(url, token)?,
        })
    }

    /// `embedded` (opened here) or `connected` (a server).
    #[getter]
    fn mode(&self) -> &'static str {
        self.core.backend.mode()
    }

    /// The person calls act as.
    fn me<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        awaitable(py, async move { backend.me().await.map(User::from) })
    }

    /// The same workspace, acting as the person `name` (embedded only).
    fn as_user<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.core.as_user_future(name);
        awaitable(py, async move { Ok(AsyncHelm { core: fut.await? }) })
    }

    /// Creates a channel (see `Helm.create_channel`).
    #[pyo3(signature = (name, purpose, *, private=false, instructions="", computer=None))]
    fn create_channel<'py>(
        &self,
        py: Python<'py>,
        name: String,
        purpose: String,
        private: bool,
        instructions: &str,
        computer: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        let request = new_channel(name, purpose, private, instructions, computer);
        awaitable(py, async move {
            let record = backend.create_channel(request).await?;
            Ok(AsyncChannel::new(backend, record))
        })
    }

    /// The channels you may see, by name.
    #[pyo3(signature = (*, archived=false))]
    fn channels<'py>(&self, py: Python<'py>, archived: bool) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            let records = backend.channels(archived).await?;
            Ok(records
                .into_iter()
                .map(|r| AsyncChannel::new(backend.clone(), r))
                .collect::<Vec<_>>())
        })
    }

    /// One channel, by name or id.
    fn channel<'py>(&self, py: Python<'py>, name: ChannelKey) -> PyResult<Bound<'py, PyAny>> {
        let name = name.into_ref();
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            let record = backend.channel(&name).await?;
            Ok(AsyncChannel::new(backend, record))
        })
    }

    /// Sets the workspace's default model (see `Helm.set_model`).
    #[pyo3(signature = (provider, model=None))]
    fn set_model<'py>(
        &self,
        py: Python<'py>,
        provider: Option<String>,
        model: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let choice = crate::channel::model_choice(provider, model).map_err(crate::errors::to_py)?;
        let backend = self.core.backend.clone();
        awaitable(py, async move { backend.set_workspace_model(choice).await })
    }

    /// The model providers.
    #[getter]
    fn providers(&self) -> AsyncProviders {
        AsyncProviders {
            backend: self.core.backend.clone(),
        }
    }

    /// Approval requests (only pending ones unless `pending` is false).
    #[pyo3(signature = (*, pending=true))]
    fn approvals<'py>(&self, py: Python<'py>, pending: bool) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            Ok(backend
                .approvals(pending)
                .await?
                .into_iter()
                .map(Approval::from)
                .collect::<Vec<_>>())
        })
    }

    /// Approves a pending request.
    #[pyo3(signature = (id, note=None))]
    fn approve<'py>(
        &self,
        py: Python<'py>,
        id: i64,
        note: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            backend.decide(id, true, note).await.map(Approval::from)
        })
    }

    /// Denies a pending request.
    #[pyo3(signature = (id, note=None))]
    fn deny<'py>(
        &self,
        py: Python<'py>,
        id: i64,
        note: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            backend.decide(id, false, note).await.map(Approval::from)
        })
    }

    /// Adds a person (`member` or `admin`).
    #[pyo3(signature = (name, role="member"))]
    fn add_user<'py>(
        &self,
        py: Python<'py>,
        name: String,
        role: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        let role = self::role(role).map_err(crate::errors::to_py)?;
        awaitable(py, async move {
            backend.add_user(&name, role).await.map(User::from)
        })
    }

    /// Makes a person an admin or a member (see `Helm.set_role`).
    fn set_role<'py>(
        &self,
        py: Python<'py>,
        name: String,
        role: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let change = PersonChange {
            role: Some(self::role(role).map_err(crate::errors::to_py)?),
            active: None,
        };
        self.change_person(py, name, change)
    }

    /// Deactivates a person (see `Helm.deactivate_user`).
    fn deactivate_user<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyAny>> {
        self.change_person(py, name, access(false))
    }

    /// Reactivates a deactivated person.
    fn reactivate_user<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyAny>> {
        self.change_person(py, name, access(true))
    }

    /// Lets go of the workspace (see `Helm.close`).
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            backend.close().await;
            Ok(())
        })
    }

    fn __aenter__<'py>(slf: PyRef<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this: Py<PyAny> = slf.into_pyobject(py)?.into_any().unbind();
        awaitable(py, async move { Ok(this) })
    }

    #[pyo3(signature = (*_exc))]
    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        _exc: &Bound<'py, pyo3::types::PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.close(py)
    }

    fn __repr__(&self) -> String {
        self.core.repr("AsyncHelm")
    }
}

/// The arguments of `providers.add`, checked.
fn provider_config(
    name: String,
    kind: &str,
    base_url: String,
    api_key_env: Option<String>,
    default_model: Option<String>,
) -> Result<ProviderConfig> {
    Ok(ProviderConfig {
        name,
        kind: kind.parse::<ProviderKind>()?,
        base_url,
        // Parsed as the CLI and the server parse it: a variable's name, or
        // `file:`/`stored:` references; anything else is invalid input.
        api_key: api_key_env
            .map(|key| key.parse::<ApiKeyRef>())
            .transpose()?,
        default_model,
        extra_headers: Default::default(),
    })
}

/// Registers a Python provider; `asyncio` when `AsyncHelm` registers it,
/// so its `async` methods run on the loop running now (a blocking `Helm`'s
/// caller waits with its thread, so they run on the package's own loop).
fn register(
    backend: &SharedBackend,
    py: Python<'_>,
    name: String,
    provider: Py<PyAny>,
    asyncio: bool,
) -> PyResult<()> {
    let locals = asyncio.then(|| crate::runtime::running_loop(py)).flatten();
    let provider = PyProvider::new(py, name.clone(), provider, locals)?;
    backend
        .register_provider(&name, Arc::new(provider))
        .map_err(crate::errors::to_py)
}

/// The model providers of a workspace (blocking).
#[pyclass(frozen, module = "onehelm")]
pub struct Providers {
    backend: SharedBackend,
}

#[pymethods]
impl Providers {
    /// Adds a provider configuration (a name already registered raises
    /// `Conflict` unless `replace=True`): `kind` is `openai`
    /// (any OpenAI-compatible server: OpenAI, Ollama, vLLM, llama.cpp,
    /// OpenRouter, LiteLLM) or `anthropic`. The key is named, never given:
    /// `api_key_env` is the environment variable that holds it (`env:VAR`
    /// or `VAR`), or `file:/path` for a file holding it, or `stored:NAME`
    /// for a key Helm keeps; anything else raises `InvalidInput`.
    #[pyo3(signature = (name, *, base_url, kind="openai", api_key_env=None, default_model=None, make_default=false, replace=false))]
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        py: Python<'_>,
        name: String,
        base_url: String,
        kind: &str,
        api_key_env: Option<String>,
        default_model: Option<String>,
        make_default: bool,
        replace: bool,
    ) -> PyResult<ProviderInfo> {
        let backend = self.backend.clone();
        let config = provider_config(name, kind, base_url, api_key_env, default_model)
            .map_err(crate::errors::to_py)?;
        blocking(py, async move {
            backend
                .add_provider(config, make_default, replace)
                .await
                .map(ProviderInfo::from)
        })
    }

    /// The configured providers.
    fn list(&self, py: Python<'_>) -> PyResult<Vec<ProviderInfo>> {
        let backend = self.backend.clone();
        blocking(py, async move {
            Ok(backend
                .providers()
                .await?
                .into_iter()
                .map(ProviderInfo::from)
                .collect())
        })
    }

    /// Serves the provider `name` with a Python object of this process: one
    /// with `stream(request)` (yielding `str` text and `ModelToolCall`s) or
    /// `complete(request)` (returning `str` or a `ModelResponse`), plain or
    /// `async`. Then `channel.set_model(name)` routes a channel's turns to
    /// it. Async methods run on a loop of the package's own. Embedded
    /// workspaces only.
    fn register(&self, py: Python<'_>, name: String, provider: Py<PyAny>) -> PyResult<()> {
        register(&self.backend, py, name, provider, false)
    }
}

/// The model providers of a workspace (asyncio).
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncProviders {
    backend: SharedBackend,
}

#[pymethods]
impl AsyncProviders {
    /// Adds a provider configuration, or replaces one with `replace=True`
    /// (see `Providers.add`).
    #[pyo3(signature = (name, *, base_url, kind="openai", api_key_env=None, default_model=None, make_default=false, replace=false))]
    #[allow(clippy::too_many_arguments)]
    fn add<'py>(
        &self,
        py: Python<'py>,
        name: String,
        base_url: String,
        kind: &str,
        api_key_env: Option<String>,
        default_model: Option<String>,
        make_default: bool,
        replace: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.backend.clone();
        let config = provider_config(name, kind, base_url, api_key_env, default_model)
            .map_err(crate::errors::to_py)?;
        awaitable(py, async move {
            backend
                .add_provider(config, make_default, replace)
                .await
                .map(ProviderInfo::from)
        })
    }

    /// The configured providers.
    fn list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.backend.clone();
        awaitable(py, async move {
            Ok(backend
                .providers()
                .await?
                .into_iter()
                .map(ProviderInfo::from)
                .collect::<Vec<_>>())
        })
    }

    /// Serves the provider `name` with a Python object (see
    /// `Providers.register`). Async methods run on the event loop that is
    /// running when this is called.
    fn register(&self, py: Python<'_>, name: String, provider: Py<PyAny>) -> PyResult<()> {
        register(&self.backend, py, name, provider, true)
    }
}
