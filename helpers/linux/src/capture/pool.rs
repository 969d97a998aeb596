//! Threads kept from one capture to the next, to scale and encode strips
//! on. Spawning a thread per capture costs more than the clone: the
//! scheduler queues a new thread behind whatever already runs, and on a
//! busy two-core machine it started well over a millisecond late, then
//! took as long again to be joined. A thread that sleeps on a channel
//! between captures is woken as a sleeper, which runs at once.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

/// What a job left behind: its value, or the payload of its panic.
pub type Outcome<T> = std::thread::Result<T>;

/// A job with its lifetime erased (see `Pool::run`).
type Task = Box<dyn FnOnce() + Send + 'static>;

/// Worker threads, spawned on first use and ended on drop.
#[derive(Default)]
pub struct Pool {
    workers: Vec<Worker>,
}

struct Worker {
    tasks: Sender<Task>,
    /// One message per task run, sent once the task and everything it
    /// borrowed are done with.
    done: Receiver<()>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    fn spawn() -> Option<Worker> {
        let (tasks, inbox) = channel::<Task>();
        let (finished, done) = channel();
        let thread = std::thread::Builder::new()
            .name("deskhand-strips".into())
            .spawn(move || {
                for task in inbox {
                    // A task catches its own panic (see `run`); this only
                    // keeps the thread for the next one if it did not.
                    let _ = catch_unwind(AssertUnwindSafe(task));
                    if finished.send(()).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Worker {
            tasks,
            done,
            thread: Some(thread),
        })
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop; `tasks` is dropped
        // only after this returns, so swap in a closed one first.
        let (closed, _) = channel();
        drop(std::mem::replace(&mut self.tasks, closed));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Pool {
    /// Runs `jobs` at once, the first on the calling thread and each other
    /// on a worker of its own (spawned on first use; a job with no worker
    /// runs on the calling thread after the first), and returns what each
    /// left behind, in order. Returns only once every job is finished,
    /// whatever happens in any of them.
    pub fn run<'a, T: Send + 'a>(
        &mut self,
        jobs: Vec<Box<dyn FnOnce() -> T + Send + 'a>>,
    ) -> Vec<Outcome<T>> {
        let mut outcomes: Vec<Option<Outcome<T>>> = jobs.iter().map(|_| None).collect();
        let mut jobs = jobs.into_iter().zip(outcomes.iter_mut());
        let Some((first, first_outcome)) = jobs.next() else {
            return Vec::new();
        };
        while self.workers.len() < jobs.len() {
            match Worker::spawn() {
                Some(w) => self.workers.push(w),
                None => break,
            }
        }
        let mut local = Vec::new();
        let mut sent = Waits::default();
        for (i, (job, outcome)) in jobs.enumerate() {
            let task: Box<dyn FnOnce() + Send + '_> = Box::new(move || {
                *outcome = Some(catch_unwind(AssertUnwindSafe(job)));
            });
            let Some(worker) = self.workers.get(i) else {
                local.push(task);
                continue;
            };
            // SAFETY: the task borrows `outcomes` and whatever the job
            // borrows, all of which outlive this call. It does not outlive
            // this call: `sent` waits, before `run` returns or unwinds,
            // until the worker has reported it run (and so dropped), or
            // until the worker's end of the channel is gone, which drops
            // the task unrun.
            let task: Task =
                unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Task>(task) };
            match worker.tasks.send(task) {
                Ok(()) => sent.0.push(&worker.done),
                Err(back) => local.push(back.0),
            }
        }
        *first_outcome = Some(catch_unwind(AssertUnwindSafe(first)));
        for task in local {
            task();
        }
        drop(sent);
        outcomes
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| Err(Box::new("a strip job never ran") as Box<dyn Any + Send>))
            })
            .collect()
    }
}

impl Pool {
    /// Runs `f` on `bands` runs of whole rows of `data` (rows of
    /// `row_bytes`) at once, each with the index of its first row, and
    /// returns when all are done. Every row is in exactly one run.
    pub fn for_bands(
        &mut self,
        bands: usize,
        data: &mut [u8],
        row_bytes: usize,
        f: &(dyn Fn(usize, &mut [u8]) + Sync),
    ) {
        let rows = data.len() / row_bytes.max(1);
        let per = rows.div_ceil(bands.max(1)).max(1);
        let jobs: Vec<Box<dyn FnOnce() + Send + '_>> = data
            .chunks_mut(per * row_bytes.max(1))
            .enumerate()
            .map(|(i, band)| Box::new(move || f(i * per, band)) as Box<dyn FnOnce() + Send>)
            .collect();
        for outcome in self.run(jobs) {
            if let Err(panic) = outcome {
                std::panic::resume_unwind(panic);
            }
        }
    }
}

/// The workers that were sent a task of this run; dropping it waits for
/// each to finish its task.
#[derive(Default)]
struct Waits<'p>(Vec<&'p Receiver<()>>);

impl Drop for Waits<'_> {
    fn drop(&mut self) {
        for done in &self.0 {
            // An error means the worker is gone, and the task with it.
            let _ = done.recv();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_once_and_in_order_of_results() {
        let mut pool = Pool::default();
        for round in 0..50 {
            let mut cells = vec![0u32; 4];
            let jobs: Vec<Box<dyn FnOnce() -> usize + Send + '_>> = cells
                .iter_mut()
                .enumerate()
                .map(|(i, c)| {
                    Box::new(move || {
                        *c += 1;
                        i * 10 + round
                    }) as Box<dyn FnOnce() -> usize + Send>
                })
                .collect();
            let out: Vec<usize> = pool.run(jobs).into_iter().map(|o| o.unwrap()).collect();
            assert_eq!(out, [round, 10 + round, 20 + round, 30 + round]);
            assert_eq!(cells, [1, 1, 1, 1], "round {round}");
        }
        assert_eq!(pool.workers.len(), 3, "workers are kept, not spawned again");
    }

    /// `run` returns only after a slow worker job is done with what it
    /// borrowed: the value it wrote is there when `run` returns.
    #[test]
    fn run_waits_for_the_slowest_job() {
        let mut pool = Pool::default();
        let mut slow = 0u64;
        let jobs: Vec<Box<dyn FnOnce() + Send + '_>> = vec![
            Box::new(|| {}),
            Box::new(|| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                slow = 7;
            }),
        ];
        pool.run(jobs);
        assert_eq!(slow, 7);
    }

    #[test]
    fn bands_cover_every_row_once_with_its_index() {
        let mut pool = Pool::default();
        for (rows, bands) in [(10, 2), (7, 3), (1, 2), (5, 1), (4, 8)] {
            let mut data = vec![0u8; rows * 3];
            pool.for_bands(bands, &mut data, 3, &|top, band| {
                for (i, row) in band.chunks_mut(3).enumerate() {
                    for b in row {
                        *b += (top + i) as u8 + 1;
                    }
                }
            });
            let want: Vec<u8> = (0..rows).flat_map(|r| [r as u8 + 1; 3]).collect();
            assert_eq!(data, want, "{rows} rows in {bands} bands");
        }
    }

    #[test]
    fn a_panicking_job_is_reported_and_the_pool_goes_on() {
        let mut pool = Pool::default();
        let jobs: Vec<Box<dyn FnOnce() -> u8 + Send>> =
            vec![Box::new(|| 1), Box::new(|| panic!("strip job test panic"))];
        let out = pool.run(jobs);
        assert!(matches!(out[0], Ok(1)));
        assert!(out[1].is_err());
        let jobs: Vec<Box<dyn FnOnce() -> u8 + Send>> = vec![Box::new(|| 3), Box::new(|| 4)];
        let out: Vec<u8> = pool.run(jobs).into_iter().map(|o| o.unwrap()).collect();
        assert_eq!(out, [3, 4]);
    }
}
