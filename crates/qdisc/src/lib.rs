//! Queue disciplines and the control laws inside them, as pure state machines.
//!
//! Nothing here does I/O or reads a clock: the caller passes the time in. The
//! simulator drives these with its event clock and the shaper daemon with real
//! time, so both run the same code.
#![deny(missing_docs)]

pub mod pie;

pub use pie::{PieConfig, PieController};
