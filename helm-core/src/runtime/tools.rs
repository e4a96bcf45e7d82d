//! The tools a turn sees: the channel's [`ToolRegistry`], assembled from
//! the built-in set (a channel agent's or Skipper's) and the tools an
//! embedding application registered for the channel.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, RwLock};

use crate::error::{Error, Result};
use crate::model::{ChannelId, ChannelKind};
use crate::store::ChannelRecord;
use crate::tool::{Tool, ToolRegistry, ToolSource, builtin, skipper, validate_tool_name};

static CHANNEL_TOOLS: LazyLock<Vec<Arc<dyn Tool>>> = LazyLock::new(builtin::channel_tools);
static SKIPPER_TOOLS: LazyLock<Vec<Arc<dyn Tool>>> = LazyLock::new(skipper::skipper_tools);

/// Tools an embedding application registered, per channel.
#[derive(Default)]
pub(crate) struct EmbedderTools {
    by_channel: RwLock<HashMap<ChannelId, Vec<Arc<dyn Tool>>>>,
}

impl EmbedderTools {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<ChannelId, Vec<Arc<dyn Tool>>>> {
        // Inserts and removes cannot leave the map half-changed.
        self.by_channel.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<ChannelId, Vec<Arc<dyn Tool>>>> {
        self.by_channel.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `tool` for `record`'s agent; its name must be free there.
    pub(crate) fn register(&self, record: &ChannelRecord, tool: Arc<dyn Tool>) -> Result<()> {
        let spec = tool.spec();
        spec.validate()?;
        if spec.name.starts_with("mcp__") {
            return Err(Error::invalid(
                "tool name",
                format!(
                    "{}: names starting with mcp__ belong to the channel's MCP servers",
                    spec.name
                ),
            ));
        }
        let built_in = builtin_set(record.channel.kind)
            .iter()
            .any(|t| t.spec().name == spec.name);
        let mut map = self.write();
        let tools = map.entry(record.channel.id).or_default();
        if built_in || tools.iter().any(|t| t.spec().name == spec.name) {
            return Err(Error::Conflict(format!(
                "{} already has a tool named {}; choose another name (or unregister it first)",
                record.channel.name, spec.name
            )));
        }
        tools.push(tool);
        Ok(())
    }

    /// Removes the tool named `name` from `record`'s agent.
    pub(crate) fn unregister(&self, record: &ChannelRecord, name: &str) -> Result<Arc<dyn Tool>> {
        validate_tool_name(name)?;
        let mut map = self.write();
        let tools = map.entry(record.channel.id).or_default();
        match tools.iter().position(|t| t.spec().name == name) {
            Some(i) => Ok(tools.remove(i)),
            None => Err(Error::not_found(
                "tool",
                format!("{name} in {}", record.channel.name),
            )),
        }
    }

    /// Forgets a channel's tools (it was deleted).
    pub(crate) fn forget(&self, channel: ChannelId) {
        self.write().remove(&channel);
    }

    fn of(&self, channel: ChannelId) -> Vec<Arc<dyn Tool>> {
        self.read().get(&channel).cloned().unwrap_or_default()
    }
}

fn builtin_set(kind: ChannelKind) -> &'static [Arc<dyn Tool>] {
    match kind {
        ChannelKind::Home => &SKIPPER_TOOLS,
        _ => &CHANNEL_TOOLS,
    }
}

impl super::Runtime {
    /// The registry a turn in `record` sees: Skipper's tools in `#main` and
    /// when Skipper is called into a thread, the resident agent's
    /// otherwise, then the channel's registered tools.
    pub(crate) fn registry_for(
        &self,
        record: &ChannelRecord,
        skipper: bool,
    ) -> Result<ToolRegistry> {
        let mut registry = ToolRegistry::new();
        let (source, set) = if skipper {
            (ToolSource::Skipper, &*SKIPPER_TOOLS)
        } else {
            (ToolSource::Builtin, &*CHANNEL_TOOLS)
        };
        for tool in set {
            registry.insert(source.clone(), tool.clone())?;
        }
        // Registered tools belong to the channel's resident agent (in
        // `#main`, to Skipper); Skipper called into another channel keeps
        // its own set.
        if skipper == (record.channel.kind == ChannelKind::Home) {
            for tool in self.embedder_tools.of(record.channel.id) {
                registry.insert(ToolSource::Embedder, tool)?;
            }
        }
        Ok(registry)
    }
}
