//! The congested state and the early-drop control law: sans-IO, in
//! `bauxite-control` (which the simulator shares); the daemon feeds it from netlink.

pub use bauxite_control::congestion::{Controller, LaneSample, LaneVerdict, Transition};
