//! The link between a robot and its base, as a pure state machine.
//!
//! A robot's uplink is a radio whose capacity nobody announces: LTE, 5G or a mesh
//! radio, with a modem buffer in front of it. [`LinkModel`] models it as a pipeline
//! of stages — a drop-tail queue, a rate (constant, or a mahimahi delivery trace
//! with `mm-link`'s exact semantics), loss (Bernoulli or Gilbert–Elliott) and
//! propagation delay with jitter — that can be switched at given times
//! ([`Timeline`]). It does no I/O and reads no clock, so the network-namespace
//! emulator (`bauxite-netlab`) and the simulator (`bauxite-sim`) run the same link,
//! and a user describes it once ([`LinkSpec`], the `--link` value).

mod loss;
mod model;
mod spec;
mod trace;

pub use loss::{GilbertElliott, Loss, LossModel};
pub use model::{Admission, DEMO_TBF_BURST_BYTES, LinkChange, LinkConfig, LinkModel, LinkRate, Outcome, QueueLimit};
pub use spec::{
    LinkDirections, LinkSpec, LinkSpecError, MAX_LINK_DELAY, MAX_QUEUE_BYTES, RateSpec, Timeline, load_link,
    load_link_directions, parse_queue_bytes,
};
pub use trace::{DeliveryTrace, MAX_TRACE_BYTES, OPPORTUNITY_BYTES, TraceError, TraceStats};
