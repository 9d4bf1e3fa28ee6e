//! Integration tests: the real `skillserve` binary, driven over stdio with
//! rmcp's client or run as a command, in temporary copies of `fixtures/`.
//!
//! One test binary (as in `fd`), so that the shared test environment in
//! `common` is compiled and linked once. They run on Unix: they use signals,
//! FIFOs, permissions and symlinks to build the situations they test.
#![cfg(unix)]
// Tests make their fixtures with std::fs (the rule that only `disk` and
// `gate` open files is the library's), and some report what they measured.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test code: fixtures through std::fs, measurements on stderr"
)]

mod common;

mod app;
mod app_usage;
mod catalog;
mod cli;
mod files;
mod gate;
mod hostile;
mod http;
mod http_auth;
mod http_runtime;
mod import;
mod layers;
mod plugins;
mod private;
mod profiles;
mod prompts;
mod properties;
mod refresh;
mod resources;
mod scanning;
mod search;
mod security;
mod server;
mod settings;
mod signatures;
mod sources;
mod sources_edges;
mod standards;
mod sync;
mod trust;
mod usage;
mod writes;
