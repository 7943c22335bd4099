//! Work shared over the machine's cores: the mirror's sync reads, observes and files partitions
//! on them, and builds their batches.

/// Runs `work` on each of `tasks` and gives the results back in the tasks' order. When their
/// weights add up to `at_least` or more, on up to as many threads as the machine has cores, the
/// heaviest task first, each to the least loaded thread; otherwise here (a thread costs tens of
/// microseconds, more than a small sync's work). A panic in `work` (a bug) goes on here.
pub(crate) fn on_threads<T: Send, R: Send>(
    tasks: Vec<T>,
    weight: impl Fn(&T) -> usize,
    at_least: usize,
    work: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let weights: Vec<usize> = tasks.iter().map(&weight).collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(tasks.len());
    if threads < 2 || weights.iter().sum::<usize>() < at_least {
        return tasks.into_iter().map(work).collect();
    }
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(weights[i]));
    let mut slots: Vec<Option<T>> = tasks.into_iter().map(Some).collect();
    let mut shares: Vec<Vec<(usize, T)>> = (0..threads).map(|_| Vec::new()).collect();
    let mut loads = vec![0usize; threads];
    for i in order {
        let at = (0..threads).min_by_key(|&t| loads[t]).unwrap_or(0);
        loads[at] = loads[at].saturating_add(weights[i]);
        if let Some(task) = slots[i].take() {
            shares[at].push((i, task));
        }
    }
    let work = &work;
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| scope.spawn(move || share.into_iter().map(|(i, task)| (i, work(task))).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().flat_map(joined).collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// A scoped thread's result; a panic in it (a bug) goes on here as it would have inline.
pub(crate) fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_tasks_order_inline_or_on_threads() {
        let tasks: Vec<usize> = (0..50).collect();
        for at_least in [0, usize::MAX] {
            let out = on_threads(tasks.clone(), |&t| t % 7, at_least, |t| t * 2);
            assert_eq!(out, tasks.iter().map(|t| t * 2).collect::<Vec<_>>());
        }
        assert!(on_threads(Vec::<usize>::new(), |_| 1, 0, |t| t).is_empty());
    }

    #[test]
    fn a_panic_on_a_thread_goes_on_to_the_caller() {
        let outcome = std::panic::catch_unwind(|| {
            on_threads(vec![1, 2, 3], |_| 1, 0, |t| if t == 2 { panic!("a bug") } else { t })
        });
        assert!(outcome.is_err());
    }
}
