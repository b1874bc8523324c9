//! The environment as the engines read it: once per process, into one typed value,
//! [`Tuning`]. It holds the overrides the tuning scripts set to sweep a constant on the
//! machine at hand without rebuilding (`scripts/gpu_tune.sh` and the CPU sweeps), the
//! CPU pool's wait policy, and the GPU runners' step tracing. Nothing else in `algo` or
//! `gpu` reads the environment.

use std::sync::OnceLock;

/// Every setting the environment may override, read at first use.
#[derive(Clone, Debug)]
pub struct Tuning {
    /// `CHATTY_WAIT_POLICY` (`active`, `passive`; unset or empty: the default), how the
    /// CPU pool's idle threads wait ([`crate::pool::wait_policy`]).
    pub wait_policy: WaitPolicy,
    /// `CHATTY_BC_ALPHA`: the CPU BC's bottom-up threshold.
    pub bc_alpha: Option<u64>,
    /// `CHATTY_PERSISTENT_BLOCKS_PER_SM`: blocks per SM of the GPU's persistent kernels.
    pub persistent_blocks_per_sm: Option<u32>,
    /// `CHATTY_BFS_CHASE_DELTA`: the hop step at which a GPU BFS runs as near-far (0: off).
    pub bfs_chase_delta: Option<u64>,
    /// `CHATTY_SSSP_LOCAL_ROUNDS`: block-local rounds per GPU SSSP step (0: off).
    pub sssp_local_rounds: Option<u32>,
    /// `CHATTY_BFS_HUB_MASKS=0` turns the GPU BFS's hub masks off.
    pub bfs_hub_masks: bool,
    /// `CHATTY_BFS_BITMAP=0` turns the GPU BFS's level bitmaps off.
    pub bfs_bitmap: bool,
    /// `CHATTY_BC_BATCH`: the most sources a GPU BC batch takes.
    pub bc_batch: Option<usize>,
    /// `CHATTY_BC_BITS`: which sweeps of the GPU BC use its bitmaps.
    pub bc_bits: Option<u32>,
    /// `CHATTY_BC_UP_SHARE`: the GPU BC's bottom-up share (0: top-down only).
    pub bc_up_share: Option<u32>,
    /// `CHATTY_TRACE_STEPS` (not `0`): the GPU traversals time and print every step.
    pub trace_steps: bool,
    /// `CHATTY_STEP_DRIVER=launch`: the GPU traversals launch once per step, not
    /// cooperatively.
    pub launch_per_step: bool,
    /// The first variable whose value could not be read, and why.
    problem: Option<(&'static str, String)>,
}

impl Tuning {
    /// The process's settings, read from the environment at the first call.
    pub fn get() -> &'static Tuning {
        static TUNING: OnceLock<Tuning> = OnceLock::new();
        TUNING.get_or_init(Tuning::from_env)
    }

    /// An error naming the first variable whose value was not understood (set but
    /// not a number, or a wait policy other than `active` or `passive`).
    pub fn check(&self) -> crate::Result<()> {
        match &self.problem {
            None => Ok(()),
            Some((name, problem)) => Err(crate::Error::Parameter { name, problem: problem.clone() }),
        }
    }

    fn from_env() -> Tuning {
        let mut problem = None;
        let wait = variable("CHATTY_WAIT_POLICY", &mut problem);
        let mut number = |name| number(name, &mut problem);
        let (bc_alpha, blocks, chase) =
            (number("CHATTY_BC_ALPHA"), number("CHATTY_PERSISTENT_BLOCKS_PER_SM"), number("CHATTY_BFS_CHASE_DELTA"));
        let (rounds, hub_masks, bitmap) = (number("CHATTY_SSSP_LOCAL_ROUNDS"), number("CHATTY_BFS_HUB_MASKS"), number("CHATTY_BFS_BITMAP"));
        let (bc_batch, bc_bits, bc_up_share) = (number("CHATTY_BC_BATCH"), number("CHATTY_BC_BITS"), number("CHATTY_BC_UP_SHARE"));
        let small = |x: Option<u64>| x.map(|x| x.min(u32::MAX as u64) as u32);
        let wait_policy = match wait.as_deref() {
            None => WaitPolicy::Barriers,
            Some(v) if v.eq_ignore_ascii_case("active") => WaitPolicy::Active,
            Some(v) if v.eq_ignore_ascii_case("passive") => WaitPolicy::Passive,
            Some(v) => {
                problem.get_or_insert(("CHATTY_WAIT_POLICY", format!("`{v}`: expected `active` or `passive` (or unset)")));
                WaitPolicy::Barriers
            }
        };
        Tuning {
            wait_policy,
            bc_alpha,
            persistent_blocks_per_sm: small(blocks),
            bfs_chase_delta: chase,
            sssp_local_rounds: small(rounds),
            bfs_hub_masks: hub_masks != Some(0),
            bfs_bitmap: bitmap != Some(0),
            bc_batch: bc_batch.map(|b| b as usize),
            bc_bits: small(bc_bits),
            bc_up_share: small(bc_up_share),
            trace_steps: std::env::var_os("CHATTY_TRACE_STEPS").is_some_and(|v| !v.is_empty() && v != "0"),
            launch_per_step: std::env::var("CHATTY_STEP_DRIVER").is_ok_and(|d| d == "launch"),
            problem,
        }
    }
}

/// Variable `name`'s value (`None`: unset or empty); one that is not Unicode is
/// noted in `problem`, the first one kept.
fn variable(name: &'static str, problem: &mut Option<(&'static str, String)>) -> Option<String> {
    match std::env::var(name) {
        Ok(v) if v.is_empty() => None,
        Ok(v) => Some(v),
        Err(std::env::VarError::NotPresent) => None,
        Err(e) => {
            problem.get_or_insert((name, e.to_string()));
            None
        }
    }
}

/// Variable `name` as a non-negative integer; a value that is not one is noted in
/// `problem`.
fn number(name: &'static str, problem: &mut Option<(&'static str, String)>) -> Option<u64> {
    let v = variable(name, problem)?;
    match v.parse() {
        Ok(x) => Some(x),
        Err(_) => {
            problem.get_or_insert((name, format!("`{v}`: expected a non-negative integer")));
            None
        }
    }
}

/// How idle threads wait during a kernel ([`crate::pool::wait_policy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Nothing spins: barriers and idle workers sleep.
    Passive,
    /// A region's barriers spin, for as long as waits end soon enough, then sleep;
    /// idle workers sleep between parallel loops (the default).
    Barriers,
    /// Barriers spin, and idle workers look for work for up to 2 ms (`pool`'s spin) before they sleep.
    Active,
}
