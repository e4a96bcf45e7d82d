//! Fault injection, for proving that a failure at any step of a multi-step
//! operation leaves nothing half-done. With the `test-support` feature a test
//! arms a [`FaultPoint`]; without it every check compiles to nothing.

use crate::error::Result;

/// A step of provisioning where a failure can be injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultPoint {
    /// After the rows are written, before the on-disk tree.
    BeforeWorld,
    /// After the world's `workspace/` exists, before the rest of the tree.
    MidWorld,
    /// After the whole tree exists, just before the transaction commits.
    BeforeCommit,
}

/// The armed faults of one `Helm`.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    #[cfg(feature = "test-support")]
    armed: std::sync::Arc<std::sync::Mutex<Option<FaultPoint>>>,
}

impl Faults {
    /// Makes the next pass through `point` fail once.
    #[cfg(feature = "test-support")]
    pub fn fail_once_at(&self, point: FaultPoint) {
        if let Ok(mut armed) = self.armed.lock() {
            *armed = Some(point);
        }
    }

    /// Fails if `point` is armed, disarming it.
    #[cfg(feature = "test-support")]
    pub(crate) fn check(&self, point: FaultPoint) -> Result<()> {
        let mut armed = match self.armed.lock() {
            Ok(armed) => armed,
            Err(_) => return Ok(()),
        };
        if *armed == Some(point) {
            *armed = None;
            return Err(crate::error::Error::Internal(format!(
                "injected failure at {point:?}"
            )));
        }
        Ok(())
    }

    /// Never fails without the `test-support` feature.
    #[cfg(not(feature = "test-support"))]
    #[inline(always)]
    pub(crate) fn check(&self, _point: FaultPoint) -> Result<()> {
        Ok(())
    }
}
