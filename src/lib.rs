//! skillserve: a stdio MCP server that serves Agent Skills through one tool, `skill`.
//!
//! Data flows one way: [`roots`] → [`scan`] (with [`parse`]) → [`snapshot`] →
//! [`registry`] → [`server`] or [`commands`]. See `ARCHITECTURE.md` for the map.

pub mod cli;
pub mod commands;
pub mod config;
pub mod contents;
pub mod diagnostic;
pub mod exit_codes;
pub mod import;
pub mod lint;
pub mod parse;
pub mod plugins;
pub mod registry;
pub mod render;
pub mod resolve;
pub mod roots;
pub mod scan;
pub mod server;
pub mod snapshot;
pub mod stdio;
pub mod watch;
