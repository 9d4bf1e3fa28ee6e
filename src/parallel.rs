//! Work cut into chunks, one thread each: the start-up scan's parsing and the
//! search index's reading of words.

use std::sync::OnceLock;

/// At most this many threads: parsing is open + read + YAML per file, and
/// more threads than this mostly wait on each other in the kernel.
const MAX_THREADS: usize = 4;

/// The threads worth using: the available parallelism, up to
/// [`MAX_THREADS`]. `available_parallelism` reads cgroup files, so it is
/// asked once (it was 10 system calls per folder in a tree of 20,000).
pub fn threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS)
    })
}

/// `work(chunk, first)` for `items` cut into `threads` chunks (`first` is the
/// index of the chunk's first item), in order. The first chunk runs on this
/// thread, each other on a thread of its own, or here too when no thread can
/// be started (a container's process limit, say). A worker's panic is
/// raised here.
pub fn chunks<T, R, F>(items: &[T], threads: usize, work: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&[T], usize) -> R + Sync,
{
    let size = items.len().div_ceil(threads.max(1)).max(1);
    let work = &work;
    std::thread::scope(|scope| {
        let mut parts = items.chunks(size).enumerate();
        let here = parts.next();
        let others: Vec<_> = parts
            .map(|(n, chunk)| {
                let first = n * size;
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || work(chunk, first))
                    .map_err(|_| (chunk, first))
            })
            .collect();
        let here = here.map(|(_, chunk)| work(chunk, 0));
        here.into_iter()
            .chain(others.into_iter().map(|other| {
                match other {
                    Ok(worker) => worker
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                    Err((chunk, first)) => work(chunk, first),
                }
            }))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_once_in_order_with_its_index() {
        let items: Vec<usize> = (0..10).collect();
        for threads in [0, 1, 3, 4, 10, 20] {
            let parts = chunks(&items, threads, |chunk, first| {
                assert_eq!(chunk[0], first);
                chunk.to_vec()
            });
            assert_eq!(parts.concat(), items, "{threads} threads");
        }
        assert!(chunks(&[] as &[u8], 4, |c, _| c.len()).is_empty());
    }
}
