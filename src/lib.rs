//! skillserve: a stdio MCP server that serves Agent Skills through one tool, `skill`.
//!
//! Data flows one way: [`roots`] and [`plugins`] → [`scan`] (with [`parse`]) →
//! [`snapshot`] → [`answer`] → [`server`] or [`commands`]. Everything but
//! [`server`] is blocking code without tokio, rmcp or notify; see
//! `ARCHITECTURE.md` for the map and `docs/behaviour.md` for the contract.

pub mod answer;
pub mod cli;
pub mod commands;
pub mod config;
pub mod contents;
pub mod diagnostic;
pub mod disk;
pub mod exit_codes;
pub mod files;
pub mod import;
pub mod lint;
pub mod parallel;
pub mod parse;
pub mod platform;
pub mod plugins;
pub mod program;
pub mod render;
pub mod resolve;
pub mod roots;
pub mod scan;
pub mod search;
pub mod server;
pub mod snapshot;
pub mod uri;
