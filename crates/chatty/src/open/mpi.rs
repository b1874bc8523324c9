//! The engines of an MPI job: the MPI engine (every rank holds its rows of a `.cgr`),
//! and the GPU engine over the GPUs of every rank. Without the `mpi` feature both
//! are refused with how to build them.

use std::path::Path;

use chatty_graph::{Graph, Progress, ReadOptions};

use crate::open::Opened;
use crate::{EngineSpec, Error, Note, Result};

#[cfg(not(feature = "mpi"))]
fn not_built() -> Error {
    let what =
        "this chatty was built without MPI: build it with `cargo build --release --features mpi` (needs Open MPI or MPICH, and libclang)";
    Error::Unsupported { option: None, what: what.into() }
}

/// The MPI engine on this rank.
#[cfg(not(feature = "mpi"))]
pub(crate) fn open(_: &EngineSpec, _: Option<&Path>, _: Vec<Note>) -> Result<Opened> {
    Err(not_built())
}

/// The GPU engine across the job's processes.
#[cfg(not(feature = "mpi"))]
pub(crate) fn open_gpu_job(
    _: &EngineSpec,
    _: Option<(&Path, ReadOptions)>,
    _: &mut Option<Graph>,
    _: &dyn Progress,
    _: Vec<Note>,
) -> Result<Opened> {
    Err(not_built())
}

#[cfg(feature = "mpi")]
pub(crate) use with_mpi::{open, open_gpu_job};

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::sync::Arc;

    use chatty_gpu::{Gpu, GpuEngine, Order};

    use super::*;
    use crate::open::multi;
    use crate::process;
    use crate::spec::{Distribute, GpuCount};

    /// The MPI engine on this rank (every rank maps its rows of `file`, a `.cgr`);
    /// rank 0 speaks for the job.
    pub(crate) fn open(spec: &EngineSpec, file: Option<&Path>, notes: Vec<Note>) -> Result<Opened> {
        let path = file.ok_or_else(|| Error::Unsupported {
            option: None,
            what: "the MPI engine opens a .cgr file on every rank, not a graph in memory".into(),
        })?;
        if spec.reorder == Order::Degree {
            return Err(Error::Unsupported {
                option: Some("reorder"),
                what: "degree applies to the GPU engines; the MPI engine renumbers in bfs order only".into(),
            });
        }
        // With Distribute::Mpi or Multicast only rank 0 reads the file (its error reaches every rank).
        let shared = matches!(spec.mpi.distribute, Distribute::Shared);
        if (shared || process::under_rank_0()) && !chatty_graph::cgr::is_cgr(path)? {
            let what = format!(
                "{0}: the MPI engine runs on a .cgr, of which every rank maps its own rows; make one with `chatty convert {0} -o NAME.cgr`",
                path.display()
            );
            return Err(Error::Unsupported { option: None, what });
        }
        let (distribute, multicast) = match &spec.mpi.distribute {
            Distribute::Shared => (chatty_dist::Distribute::Shared, None),
            Distribute::Mpi => (chatty_dist::Distribute::Mpi, None),
            Distribute::Multicast(m) => (
                chatty_dist::Distribute::Multicast,
                Some(chatty_dist::Multicast {
                    local_dir: m.local_dir.clone(),
                    group: m.group,
                    interface: m.interface,
                    key: m.key.clone(),
                    wait: std::time::Duration::from_secs(60),
                }),
            ),
        };
        let options =
            chatty_dist::Options { distribute, multicast, bfs_order: spec.reorder == Order::Bfs, split_sources: spec.mpi.split_sources };
        let engine = chatty_dist::DistEngine::open(path, spec.mpi.digest, options)?;
        let speaks = engine.rank() == 0;
        Ok(Opened { engine: Box::new(engine), choice: None, notes, speaks })
    }

    /// The multi-GPU engine over the GPUs of every rank. Each rank reads the graph,
    /// drives its own GPUs (`devices`, else as many as `gpus` says from its local
    /// rank's, modulo the GPUs it sees: one by default) and holds the parts that fall
    /// to them; values travel between ranks through MPI.
    pub(crate) fn open_gpu_job(
        spec: &EngineSpec,
        file: Option<(&Path, ReadOptions)>,
        held: &mut Option<Graph>,
        progress: &dyn Progress,
        notes: Vec<Note>,
    ) -> Result<Opened> {
        let comm = chatty_dist::start(spec.mpi.digest)?;
        let rank = comm.rank();
        let count = Gpu::count();
        let devices = match &spec.gpu.devices {
            Some(d) => d.clone(),
            None if count == 0 => {
                return Err(Error::Unsupported { option: None, what: format!("rank {rank}: the GPU engine found no GPU on this host") })
            }
            None => {
                let per_rank = match spec.gpu.gpus {
                    GpuCount::All => count,
                    GpuCount::Auto => 1,
                    GpuCount::Count(k) => k,
                };
                let local = process::local_rank(rank);
                (0..per_rank).map(|i| (local * per_rank + i) % count).collect()
            }
        };
        let name = match file {
            Some((path, read)) => {
                *held = Some(chatty_graph::read_graph(path, read, progress)?);
                path.display().to_string()
            }
            None => "the graph in memory".into(),
        };
        let graph = held.take().ok_or_else(|| Error::Parameter { name: "graph", problem: "was given to an engine already".into() })?;
        let shape = format!("{} {} {}", graph.num_vertices(), graph.num_edges(), graph.is_directed());
        let shape = xxhash_rust::xxh3::xxh3_64(shape.as_bytes());
        let (lo, hi) = comm.min_max_u64(shape);
        if lo != hi {
            return Err(Error::Unsupported { option: None, what: format!("rank {rank}: the ranks loaded different graphs from {name}") });
        }
        let options = multi(&spec.gpu, spec.reorder, devices, Some(chatty_comm::Processes(Arc::new(comm))));
        crate::policy::gpu_started();
        Ok(Opened { engine: Box::new(GpuEngine::several(graph, options)), choice: None, notes, speaks: rank == 0 })
    }
}
