//! `/metrics` (with `--metrics`): Prometheus's text format, written by hand
//! (a handful of series need no client library). Counters are atomics, so
//! recording a request takes no lock.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The upper bounds, in seconds, of the latency histogram's buckets.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// The statuses counted one by one; any other counts as `other`.
const STATUSES: [u16; 12] = [200, 202, 204, 400, 401, 403, 404, 405, 406, 413, 415, 503];

/// What the server counts.
#[derive(Default)]
pub struct Metrics {
    /// Requests by status: one per entry of [`STATUSES`], then `other`.
    by_status: [AtomicU64; STATUSES.len() + 1],
    /// Latency of answered requests (streams excluded): one count per bucket
    /// (not cumulative; summed when written), then `+Inf`.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    /// Sum of those latencies, in microseconds.
    latency_micros: AtomicU64,
}

/// Gauges read when `/metrics` is asked for.
pub struct Gauges {
    pub sessions: usize,
    pub evicted_sessions: u64,
    pub skills: usize,
    pub connections: usize,
    pub shed_connections: u64,
    /// Loads per skill since start-up (at most `usage::MAX_LABELS` skills
    /// by name), and those of every other skill.
    pub skill_loads: (Vec<(std::sync::Arc<str>, u64)>, u64),
}

/// The label of the loads of skills without a label of their own: no
/// skill's name has parentheses.
const OTHER_SKILLS: &str = "(other)";

impl Metrics {
    /// Counts a finished request; `latency` for an answer, `None` for a
    /// stream (its lifetime says nothing about the server's speed).
    pub fn record(&self, status: u16, latency: Option<Duration>) {
        let index = STATUSES
            .iter()
            .position(|&s| s == status)
            .unwrap_or(STATUSES.len());
        self.by_status[index].fetch_add(1, Ordering::Relaxed);
        if let Some(latency) = latency {
            let seconds = latency.as_secs_f64();
            let bucket = BUCKETS
                .iter()
                .position(|&bound| seconds <= bound)
                .unwrap_or(BUCKETS.len());
            self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
            let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
            self.latency_micros.fetch_add(micros, Ordering::Relaxed);
        }
    }

    /// The text `/metrics` answers.
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP skillserve_http_requests_total HTTP requests answered, by status.\n\
             # TYPE skillserve_http_requests_total counter\n",
        );
        for (index, count) in self.by_status.iter().enumerate() {
            let status = STATUSES
                .get(index)
                .map_or_else(|| "other".to_owned(), u16::to_string);
            let _ = writeln!(
                out,
                "skillserve_http_requests_total{{status=\"{status}\"}} {}",
                count.load(Ordering::Relaxed)
            );
        }
        out.push_str(
            "# HELP skillserve_http_request_duration_seconds Time from a request to the end of its answer (streams excluded).\n\
             # TYPE skillserve_http_request_duration_seconds histogram\n",
        );
        let mut cumulative = 0;
        for (index, count) in self.buckets.iter().enumerate() {
            cumulative += count.load(Ordering::Relaxed);
            let bound = BUCKETS
                .get(index)
                .map_or_else(|| "+Inf".to_owned(), f64::to_string);
            let _ = writeln!(
                out,
                "skillserve_http_request_duration_seconds_bucket{{le=\"{bound}\"}} {cumulative}"
            );
        }
        let sum = self.latency_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "skillserve_http_request_duration_seconds_sum {sum}");
        let _ = writeln!(
            out,
            "skillserve_http_request_duration_seconds_count {cumulative}"
        );
        let gauge = |out: &mut String, name: &str, help: &str, kind: &str, value: String| {
            let _ = write!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
            );
        };
        gauge(
            &mut out,
            "skillserve_sessions",
            "Open MCP sessions (2025-11-25 clients).",
            "gauge",
            gauges.sessions.to_string(),
        );
        gauge(
            &mut out,
            "skillserve_sessions_evicted_total",
            "Sessions ended to stay within --max-sessions.",
            "counter",
            gauges.evicted_sessions.to_string(),
        );
        gauge(
            &mut out,
            "skillserve_connections",
            "Open HTTP connections.",
            "gauge",
            gauges.connections.to_string(),
        );
        gauge(
            &mut out,
            "skillserve_connections_shed_total",
            "Connections closed to make room within --max-connections (idle, or slow to send a request).",
            "counter",
            gauges.shed_connections.to_string(),
        );
        gauge(
            &mut out,
            "skillserve_skills",
            "Skills served.",
            "gauge",
            gauges.skills.to_string(),
        );
        out.push_str(
            "# HELP skillserve_skill_loads_total Skills loaded (the skill tool, prompts, skills/get, resources/read of SKILL.md) since start-up, by skill: at most 100 skills by name, the rest as \"(other)\".\n\
             # TYPE skillserve_skill_loads_total counter\n",
        );
        let (named, other) = &gauges.skill_loads;
        for (name, count) in named {
            let _ = writeln!(
                out,
                "skillserve_skill_loads_total{{skill=\"{}\"}} {count}",
                label(name)
            );
        }
        let _ = writeln!(
            out,
            "skillserve_skill_loads_total{{skill=\"{OTHER_SKILLS}\"}} {other}"
        );
        out
    }
}

/// A label value as Prometheus's text format writes it.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_is_cumulative_and_statuses_are_counted() {
        let metrics = Metrics::default();
        metrics.record(200, Some(Duration::from_micros(300)));
        metrics.record(200, Some(Duration::from_millis(20)));
        metrics.record(401, None);
        metrics.record(418, None);
        let text = metrics.render(&Gauges {
            sessions: 2,
            evicted_sessions: 0,
            skills: 7,
            connections: 1,
            shed_connections: 3,
            skill_loads: (vec![("pdf".into(), 3), ("we\"ird\\".into(), 1)], 2),
        });
        assert!(text.contains("skillserve_http_requests_total{status=\"200\"} 2\n"));
        assert!(text.contains("skillserve_http_requests_total{status=\"401\"} 1\n"));
        assert!(text.contains("skillserve_http_requests_total{status=\"other\"} 1\n"));
        assert!(
            text.contains("skillserve_http_request_duration_seconds_bucket{le=\"0.0005\"} 1\n")
        );
        assert!(text.contains("skillserve_http_request_duration_seconds_bucket{le=\"0.025\"} 2\n"));
        assert!(text.contains("skillserve_http_request_duration_seconds_bucket{le=\"+Inf\"} 2\n"));
        assert!(text.contains("skillserve_http_request_duration_seconds_count 2\n"));
        assert!(text.contains("\nskillserve_skills 7\n"));
        assert!(text.contains("\nskillserve_sessions 2\n"));
        assert!(text.contains("\nskillserve_connections_shed_total 3\n"));
        assert!(text.ends_with(
            "skillserve_skill_loads_total{skill=\"pdf\"} 3\n\
             skillserve_skill_loads_total{skill=\"we\\\"ird\\\\\"} 1\n\
             skillserve_skill_loads_total{skill=\"(other)\"} 2\n"
        ));
    }
}
