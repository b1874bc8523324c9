//! The processes of a job (the ranks of an MPI job) as the multi-GPU engine uses them
//! when its parts live in several processes: a few collectives, called by every
//! process in the same order, from one thread at a time. `chatty-dist` implements it
//! over MPI; this crate, like the GPU crate, needs no MPI to build. [`Threads`] stands
//! threads of one process in for processes (the GPU tests run the multi-process
//! paths that way). Besides the collectives, a [`ProcessLink`] carries messages
//! between two processes from any thread (GMPI's proxies forward through it).

use std::sync::Arc;

/// A failed collective (the implementation's message).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct GroupError(pub String);

/// Every process of a job, each calling the same collectives in the same order.
pub trait Group: Send + Sync {
    /// This process's index, 0 to `size() - 1`.
    fn rank(&self) -> usize;

    /// Number of processes.
    fn size(&self) -> usize;

    /// Element-wise wrapping sums of `mine` over every process (every process passes
    /// the same length). Also an all-gather of fixed-size entries: each process fills
    /// its own entries and leaves the others zero.
    fn sum_u64(&self, mine: &[u64]) -> Vec<u64>;

    /// Element-wise sums of `mine` over every process.
    fn sum_f64(&self, mine: &[f64]) -> Vec<f64>;

    /// Every process's `mine`, concatenated in rank order into `all` (the lengths may
    /// differ; they must add up to `all.len()`).
    fn all_gather_into(&self, mine: &[u8], all: &mut [u8]) -> Result<(), GroupError>;

    /// The job's point-to-point link (collective: every process asks for it, in the
    /// same order as the other collectives). Refused where the implementation cannot
    /// be called from several threads at once.
    fn link(&self) -> Result<Arc<dyn ProcessLink>, GroupError>;
}

/// Messages between the processes of a job, sent and received from any thread while
/// the collectives go on. Messages from one process to another arrive in the order
/// they were sent; nothing blocks.
pub trait ProcessLink: Send + Sync {
    /// This process's rank in the job.
    fn rank(&self) -> usize;
    /// Sends `bytes` to process `to`: the link owns them from here.
    fn send(&self, to: usize, bytes: Vec<u8>) -> Result<(), GroupError>;
    /// A message that has arrived from any process: its sender and bytes.
    fn poll(&self) -> Result<Option<(usize, Vec<u8>)>, GroupError>;
}

/// A shared [`Group`], as engine options carry it.
#[derive(Clone)]
pub struct Processes(pub Arc<dyn Group>);

impl std::fmt::Debug for Processes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "process {} of {}", self.0.rank(), self.0.size())
    }
}

impl Processes {
    /// Each process's `count` (say, its GPUs), in rank order.
    pub fn counts(&self, count: u64) -> Vec<u64> {
        Processes::counts_in(&*self.0, count)
    }

    /// [`Processes::counts`] of any group.
    pub fn counts_in(group: &dyn Group, count: u64) -> Vec<u64> {
        let mut mine = vec![0; group.size()];
        mine[group.rank()] = count;
        group.sum_u64(&mine)
    }

    /// The `k` entries of a per-part vector of which this process holds `mine`, from
    /// entry `first` on (each process fills its own, the sum gathers them).
    pub fn gather_parts(&self, k: usize, first: usize, mine: &[u64]) -> Vec<u64> {
        let mut all = vec![0; k];
        all[first..first + mine.len()].copy_from_slice(mine);
        self.0.sum_u64(&all)
    }
}

/// Threads of one process standing in for the processes of a job (tests, and runs
/// of the multi-process paths on one machine without MPI): member `rank` of `size`,
/// each used by one thread; every collective waits for all of them.
pub struct Threads {
    rank: usize,
    size: usize,
    shared: Arc<Meeting>,
}

/// What the members of [`Threads`] share: each member's offering of the current
/// collective, and a barrier (arrivals and a generation) met before and after it is
/// read.
struct Meeting {
    state: std::sync::Mutex<Round>,
    met: std::sync::Condvar,
    /// Each member's arrived messages, in arrival order.
    inboxes: Vec<std::sync::Mutex<Inbox>>,
}

/// Messages that arrived: sender and bytes.
type Inbox = std::collections::VecDeque<(usize, Vec<u8>)>;

#[derive(Default)]
struct Round {
    arrived: usize,
    generation: u64,
    offered: Vec<Vec<u8>>,
}

/// How long a member waits for the others at a collective before it panics: a member
/// that failed would otherwise leave the rest waiting forever.
const MEETING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

impl Threads {
    /// The `size` members of one job.
    pub fn job(size: usize) -> Vec<Threads> {
        let round = Round { offered: vec![Vec::new(); size], ..Round::default() };
        let inboxes = (0..size).map(|_| Default::default()).collect();
        let shared = Arc::new(Meeting { state: std::sync::Mutex::new(round), met: std::sync::Condvar::new(), inboxes });
        (0..size).map(|rank| Threads { rank, size, shared: shared.clone() }).collect()
    }

    /// Waits until every member has called it as often as this one.
    fn meet<'a>(&'a self, mut round: std::sync::MutexGuard<'a, Round>) -> std::sync::MutexGuard<'a, Round> {
        let generation = round.generation;
        round.arrived += 1;
        if round.arrived == self.size {
            round.arrived = 0;
            round.generation += 1;
            self.shared.met.notify_all();
            return round;
        }
        let (round, waited) =
            self.shared.met.wait_timeout_while(round, MEETING_TIMEOUT, |r| r.generation == generation).expect("the meeting");
        assert!(!waited.timed_out(), "member {} of {}: another member never came to the collective", self.rank, self.size);
        round
    }

    /// Element-wise sums (`add`, from `zero`, in rank order) of every member's words.
    fn sum_words<T: Copy>(&self, mine: impl ExactSizeIterator<Item = u64>, zero: T, add: impl Fn(T, u64) -> T) -> Vec<T> {
        let mut sum = vec![zero; mine.len()];
        let bytes: Vec<u8> = mine.flat_map(u64::to_le_bytes).collect();
        for theirs in self.exchange(&bytes) {
            for (s, w) in sum.iter_mut().zip(theirs.chunks_exact(8)) {
                *s = add(*s, u64::from_le_bytes(w.try_into().expect("8 bytes")));
            }
        }
        sum
    }

    /// Every member's `mine`, in rank order.
    fn exchange(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let mut round = self.shared.state.lock().expect("the meeting");
        round.offered[self.rank] = mine.to_vec();
        let round = self.meet(round);
        let all = round.offered.clone();
        // Nobody offers the next collective's bytes before everyone has read these.
        drop(self.meet(round));
        all
    }
}

impl Group for Threads {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn sum_u64(&self, mine: &[u64]) -> Vec<u64> {
        self.sum_words(mine.iter().copied(), 0u64, |s, w| s.wrapping_add(w))
    }

    fn sum_f64(&self, mine: &[f64]) -> Vec<f64> {
        self.sum_words(mine.iter().map(|x| x.to_bits()), 0f64, |s, w| s + f64::from_bits(w))
    }

    fn all_gather_into(&self, mine: &[u8], all: &mut [u8]) -> Result<(), GroupError> {
        let offered = self.exchange(mine);
        let total: usize = offered.iter().map(Vec::len).sum();
        if total != all.len() {
            return Err(GroupError(format!("the processes offered {total} bytes for {} places", all.len())));
        }
        let mut at = 0;
        for bytes in offered {
            all[at..at + bytes.len()].copy_from_slice(&bytes);
            at += bytes.len();
        }
        Ok(())
    }

    fn link(&self) -> Result<Arc<dyn ProcessLink>, GroupError> {
        Ok(Arc::new(ThreadsLink { rank: self.rank, shared: self.shared.clone() }))
    }
}

/// [`Threads`]' link: each member's inbox in the shared meeting.
struct ThreadsLink {
    rank: usize,
    shared: Arc<Meeting>,
}

impl ProcessLink for ThreadsLink {
    fn rank(&self) -> usize {
        self.rank
    }

    fn send(&self, to: usize, bytes: Vec<u8>) -> Result<(), GroupError> {
        let inbox = self.shared.inboxes.get(to).ok_or_else(|| GroupError(format!("no process {to} in this job")))?;
        inbox.lock().expect("an inbox").push_back((self.rank, bytes));
        Ok(())
    }

    fn poll(&self) -> Result<Option<(usize, Vec<u8>)>, GroupError> {
        Ok(self.shared.inboxes[self.rank].lock().expect("an inbox").pop_front())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_sum_and_gather_like_processes() {
        /// Each member's sums, float sums, gathered bytes, and whether a wrong total failed.
        type Seen = (Vec<u64>, Vec<f64>, Vec<u8>, bool);
        let results: Vec<Seen> = std::thread::scope(|s| {
            let members: Vec<_> = Threads::job(3)
                .into_iter()
                .map(|t| {
                    s.spawn(move || {
                        let r = t.rank();
                        let sums = t.sum_u64(&[r as u64 + 1, u64::MAX]);
                        let floats = t.sum_f64(&[0.5 * r as f64]);
                        let mine = vec![r as u8; r + 1];
                        let mut all = vec![0u8; 6];
                        t.all_gather_into(&mine, &mut all).unwrap();
                        let wrong = t.all_gather_into(&mine, &mut [0u8; 5]).is_err();
                        (sums, floats, all, wrong)
                    })
                })
                .collect();
            members.into_iter().map(|m| m.join().unwrap()).collect()
        });
        for (sums, floats, all, wrong) in results {
            assert_eq!(sums, vec![6, u64::MAX - 2]);
            assert_eq!(floats, vec![1.5]);
            assert_eq!(all, vec![0, 1, 1, 2, 2, 2]);
            assert!(wrong, "a wrong total is an error on every member");
        }
        let job = Threads::job(2);
        let (a, b) = (job[0].link().unwrap(), job[1].link().unwrap());
        a.send(1, vec![1]).unwrap();
        a.send(1, vec![2, 3]).unwrap();
        assert!(a.send(2, vec![]).is_err(), "no process 2");
        assert_eq!(a.poll().unwrap(), None);
        assert_eq!((b.poll().unwrap(), b.poll().unwrap(), b.poll().unwrap()), (Some((0, vec![1])), Some((0, vec![2, 3])), None));
        let p = Processes(Arc::new(Threads::job(1).pop().unwrap()));
        assert_eq!((p.counts(4), job[1].rank()), (vec![4], 1));
    }
}
