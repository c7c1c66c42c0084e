//! Work split across threads the way git's `preload_index` splits the
//! index: one thread per so many items, at most as many as there are
//! cores, each on one contiguous part; a part that gives up stops the rest.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

/// How a checker over items is split: at least `per_thread` items per
/// thread (git's `THREAD_COST` is 500 for an `lstat`), at most `max`
/// threads (and never more than the cores).
#[derive(Debug, Clone, Copy)]
pub struct Split {
    /// The fewest items worth a thread of their own.
    pub per_thread: usize,
    /// The most threads, whatever the cores.
    pub max: usize,
}

impl Split {
    /// How many threads `len` items get.
    pub fn threads(self, len: usize) -> usize {
        let wanted = len / self.per_thread.max(1);
        if wanted < 2 {
            return 1;
        }
        wanted.clamp(1, self.max.min(cores()).max(1))
    }
}

/// The cores this process may use, asked once. On Linux, the CPUs it may
/// be scheduled on, one system call, as git counts them (the standard
/// library's answer also reads the cgroup's quota files, several opens
/// and reads that cost a short command more than its split saves).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        #[cfg(target_os = "linux")]
        if let Ok(set) = rustix::thread::sched_getaffinity(None) {
            return set.count().max(1) as usize;
        }
        std::thread::available_parallelism().map_or(1, usize::from)
    })
}

/// `check` run on the parts of `0..len` (each part in item order, the
/// parts in order), their answers joined; `None` as soon as one part's
/// check answers `None`. A check is handed a flag to look at now and then:
/// set, another part has given up and its answer no longer matters. The
/// last part runs on the calling thread.
pub fn all<T, F>(len: usize, split: Split, check: F) -> Option<Vec<T>>
where
    T: Send,
    F: Fn(Range<usize>, &AtomicBool) -> Option<Vec<T>> + Sync,
{
    let threads = split.threads(len);
    let stop = AtomicBool::new(false);
    if threads == 1 {
        return check(0..len, &stop);
    }
    let size = len.div_ceil(threads);
    let part = |n: usize| (n * size).min(len)..((n + 1) * size).min(len);
    let run = |range: Range<usize>| {
        let answer = check(range, &stop);
        if answer.is_none() {
            stop.store(true, Ordering::Relaxed);
        }
        answer
    };
    // The last part runs on this thread: one thread fewer to start.
    let parts: Vec<Option<Vec<T>>> = std::thread::scope(|scope| {
        let run = &run;
        let handles: Vec<_> = (0..threads - 1)
            .map(|n| scope.spawn(move || run(part(n))))
            .collect();
        let last = run(part(threads - 1));
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .chain(std::iter::once(last))
            .collect()
    });
    let mut joined = Vec::new();
    for part in parts {
        joined.extend(part?);
    }
    Some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPLIT: Split = Split {
        per_thread: 10,
        max: 4,
    };

    #[test]
    fn the_parts_join_in_order() {
        let got = all(1000, SPLIT, |range, _| Some(range.collect::<Vec<_>>()));
        assert_eq!(got, Some((0..1000).collect()));
        assert_eq!(
            all(0, SPLIT, |range, _| Some(range.collect::<Vec<_>>())),
            Some(vec![])
        );
    }

    #[test]
    fn one_part_giving_up_gives_none() {
        let got = all(1000, SPLIT, |range, _| {
            (!range.contains(&999)).then(|| range.collect::<Vec<_>>())
        });
        assert_eq!(got, None);
    }

    #[test]
    fn few_items_get_one_thread() {
        assert_eq!(SPLIT.threads(9), 1);
        assert!(SPLIT.threads(1_000_000) <= 4);
    }
}
