//! Integration tests: the real `skillserve` binary, driven over stdio with
//! rmcp's client or run as a command, in temporary copies of `fixtures/`.
//!
//! One test binary (as in `fd`), so that the shared test environment in
//! `common` is compiled and linked once.

mod common;

mod cli;
mod hostile;
mod import;
mod plugins;
mod properties;
mod refresh;
mod server;
mod trust;
