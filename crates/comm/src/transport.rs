//! What moves bytes between devices, as named everywhere: the methods the
//! calibration measures ([`Method`]), the transports the multi-GPU engine can exchange
//! vertex values over ([`Transport`], each measured as one method) and `--comm`
//! ([`Comm`]). The choice among them is [`crate::choice`]'s.
//! One typed vocabulary: the calibration cache stores [`Method`]s, so a rename is a
//! compile error, not a silent fallback.

use serde::{Deserialize, Serialize};

/// A way of moving bytes that `chatty topo --calibrate` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// `cuMemcpyPeerAsync` with peer access enabled (NVLink or PCIe peer DMA).
    P2p,
    /// The same call before peer access is enabled: the driver stages it through the
    /// host (the WS-VR-style baseline).
    Staged,
    /// A GPU to pinned host memory.
    D2h,
    /// Pinned host memory to a GPU.
    H2d,
    /// A kernel on the source storing 16-byte words through a peer pointer.
    PeerStore,
    /// Zero-copy through host-mapped pinned memory: a kernel on the source stores, a
    /// kernel on the destination loads (the paper's "UVA" path).
    Uva,
    /// NCCL broadcast over every GPU.
    NcclBcast,
    /// NCCL all-gather over every GPU (per pair: one rank's part).
    NcclAllgather,
    /// A GPU to pinned host memory, an MPI all-gather between processes, host memory
    /// to the other GPUs (what the multi-process engine exchanges through).
    Mpi,
    /// The MPI all-gather of that exchange alone, host memory to host memory: what
    /// `mpi` costs without its GPU copies.
    MpiHost,
}

impl Method {
    /// The name in tables and in the cache.
    pub fn name(self) -> &'static str {
        match self {
            Method::P2p => "p2p",
            Method::Staged => "staged",
            Method::D2h => "d2h",
            Method::H2d => "h2d",
            Method::PeerStore => "peer-store",
            Method::Uva => "uva",
            Method::NcclBcast => "nccl-bcast",
            Method::NcclAllgather => "nccl-allgather",
            Method::Mpi => "mpi",
            Method::MpiHost => "mpi-host",
        }
    }
}

/// How the multi-GPU engine moves updated vertex values between GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Transport {
    /// `cuMemcpyPeerAsync` with peer access enabled.
    P2p,
    /// A kernel storing through peer pointers.
    Peer,
    /// Zero-copy through host-mapped pinned memory: the sender's kernel writes it, the
    /// receivers' kernels read it (the paper's UVA path).
    Uva,
    /// Copied to pinned host memory and back (the WS-VR baseline).
    Staged,
    /// NCCL broadcast from each GPU in turn.
    Nccl,
    /// Between processes: copied to pinned host memory, all-gathered by MPI, copied
    /// to every GPU (the only transport when the parts span processes).
    Mpi,
}

impl Transport {
    /// Every transport within one process, in the order `--comm auto` breaks ties.
    pub const ALL: [Transport; 5] = [Transport::P2p, Transport::Peer, Transport::Nccl, Transport::Uva, Transport::Staged];

    /// The `--comm` name.
    pub fn name(self) -> &'static str {
        match self {
            Transport::P2p => "p2p",
            Transport::Peer => "peer",
            Transport::Uva => "uva",
            Transport::Staged => "staged",
            Transport::Nccl => "nccl",
            Transport::Mpi => "mpi",
        }
    }

    /// What the calibration measured for it.
    pub fn method(self) -> Method {
        match self {
            Transport::P2p => Method::P2p,
            Transport::Peer => Method::PeerStore,
            Transport::Uva => Method::Uva,
            Transport::Staged => Method::Staged,
            Transport::Nccl => Method::NcclBcast,
            Transport::Mpi => Method::Mpi,
        }
    }
}

/// `--comm`: one transport for everything, or the calibration's choice per exchange.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Comm {
    /// The fastest predicted transport for each exchange's sizes.
    Auto,
    /// Always this one.
    Forced(Transport),
}

impl Comm {
    /// Every choice, as `--comm` lists them.
    pub const ALL: [Comm; 7] = [
        Comm::Auto,
        Comm::Forced(Transport::P2p),
        Comm::Forced(Transport::Peer),
        Comm::Forced(Transport::Nccl),
        Comm::Forced(Transport::Uva),
        Comm::Forced(Transport::Staged),
        Comm::Forced(Transport::Mpi),
    ];

    /// `auto` or the transport's name.
    pub fn name(&self) -> &'static str {
        match self {
            Comm::Auto => "auto",
            Comm::Forced(t) => t.name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_the_cache_keeps_its_spelling() {
        let names: std::collections::HashSet<_> = Comm::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Comm::ALL.len());
        for m in [
            Method::P2p,
            Method::Staged,
            Method::D2h,
            Method::H2d,
            Method::PeerStore,
            Method::Uva,
            Method::NcclBcast,
            Method::NcclAllgather,
            Method::Mpi,
            Method::MpiHost,
        ] {
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{}\"", m.name()));
        }
    }
}
