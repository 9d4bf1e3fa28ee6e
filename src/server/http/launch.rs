//! `skillserve ui`: the server of one person's skills app. It accepts only
//! the token it was started with (which grants admin), and stops once the
//! page has been closed for [`CLOSED_FOR`]: the page asks something at
//! least every 20 s while it is open (see `ui/app.js`), so a minute without
//! a request means no page is open.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long without a request from the page before the server stops.
pub const CLOSED_FOR: Duration = Duration::from_secs(60);

/// When the page last asked something.
pub struct Activity {
    started: Instant,
    /// Milliseconds after `started`.
    last: AtomicU64,
    seen: AtomicBool,
}

impl Activity {
    pub fn new() -> Activity {
        Activity {
            started: Instant::now(),
            last: AtomicU64::new(0),
            seen: AtomicBool::new(false),
        }
    }

    /// A request from the page arrived.
    pub fn touch(&self) {
        let now = self.started.elapsed().as_millis() as u64;
        self.last.store(now, Ordering::Relaxed);
        self.seen.store(true, Ordering::Relaxed);
    }

    /// Resolves once a page was open and has asked nothing for
    /// `closed_for`; never before the first request.
    pub async fn closed(&self, closed_for: Duration) {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if !self.seen.load(Ordering::Relaxed) {
                continue;
            }
            let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
            if self.started.elapsed().saturating_sub(last) >= closed_for {
                return;
            }
        }
    }
}
