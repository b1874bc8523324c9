//! The topology probe. CUDA gives peer access and its attributes per ordered pair;
//! NVML gives the physical link: NVLinks whose remote end is the peer (direct), links
//! into an NVSwitch when NVML reports NVLink peer-to-peer without direct links (the
//! lent H200 machines: "NV18" through a switch the machine cannot see), else the PCIe
//! level of the pair's common ancestor (nvidia-smi's PIX/PXB/PHB/NODE/SYS). NVML is
//! optional: without it the links are `Unknown` and the CUDA facts remain.

use cudarc::driver::{sys, CudaContext};
use serde::Serialize;

/// One GPU.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Gpu {
    /// The CUDA ordinal.
    pub ordinal: usize,
    /// The device's name.
    pub name: String,
    /// `domain:bus:device.function`, lower case, as `lspci` prints it.
    pub pci_bus_id: String,
    /// Device memory, bytes.
    pub memory_bytes: u64,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
}

/// How two GPUs are connected.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Link {
    /// NVLinks, to the peer itself or into a switch fabric.
    Nvlink {
        /// How many.
        links: u32,
        /// Into a switch fabric rather than to the peer.
        via_switch: bool,
    },
    /// PCIe.
    Pcie {
        /// nvidia-smi's name for the closest common ancestor (`PIX`, `PXB`, `PHB`, `NODE`, `SYS`).
        level: String,
    },
    /// NVML could not tell.
    Unknown,
}

impl Link {
    /// nvidia-smi's short form: `NV18`, `PIX`, `SYS`, `?`.
    pub fn short(&self) -> String {
        match self {
            Link::Nvlink { links, .. } => format!("NV{links}"),
            Link::Pcie { level } => level.clone(),
            Link::Unknown => "?".into(),
        }
    }
}

/// One ordered pair of GPUs.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Pair {
    /// The GPU that reads or writes.
    pub src: usize,
    /// The GPU whose memory it reaches.
    pub dst: usize,
    /// `cuDeviceCanAccessPeer`: kernels on `src` may load and store `dst`'s memory
    /// once peer access is enabled.
    pub peer_access: bool,
    /// Whether atomics on the peer's memory are native (no emulation over the link).
    pub native_atomics: bool,
    /// CUDA's relative performance rank of the pair's link (lower is better).
    pub performance_rank: i32,
    /// The physical link, from NVML.
    pub link: Link,
}

/// The machine's GPUs and links.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Topology {
    /// Every GPU.
    pub gpus: Vec<Gpu>,
    /// Every ordered pair of GPUs.
    pub pairs: Vec<Pair>,
    /// Why there are no GPUs or no link facts, if so.
    pub notes: Vec<String>,
}

/// Errors of the probe: a driver call that failed on a present GPU.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source:?}")]
pub struct ProbeError {
    what: String,
    source: cudarc::driver::DriverError,
}

fn check<T>(r: Result<T, cudarc::driver::DriverError>, what: impl Into<String>) -> Result<T, ProbeError> {
    r.map_err(|source| ProbeError { what: what.into(), source })
}

/// GPU `ordinal`'s PCI bus id, as [`Gpu::pci_bus_id`] spells it.
pub fn bus_id(ordinal: usize) -> Result<String, ProbeError> {
    check(cudarc::driver::result::init(), "initialising CUDA")?;
    let mut bus = [0i8; 64];
    // SAFETY: queries on a device handle the driver returned; results are checked.
    unsafe {
        let mut dev = 0;
        check(sys::cuDeviceGet(&mut dev, ordinal as i32).result(), format!("GPU {ordinal}"))?;
        check(sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), bus.len() as i32, dev).result(), format!("GPU {ordinal}: PCI bus id"))?;
        Ok(normalise_bus_id(&std::ffi::CStr::from_ptr(bus.as_ptr()).to_string_lossy()))
    }
}

/// Probes every GPU and pair. No driver or no GPU is not an error: the topology is
/// empty and `notes` says why.
pub fn probe() -> Result<Topology, ProbeError> {
    let mut notes = Vec::new();
    // SAFETY: only probes whether the shared library can be opened.
    if !unsafe { sys::is_culib_present() } {
        notes.push("no CUDA driver (libcuda) on this machine".into());
        return Ok(Topology { gpus: Vec::new(), pairs: Vec::new(), notes });
    }
    let count = check(CudaContext::device_count(), "counting devices")?.max(0) as usize;
    let mut gpus = Vec::new();
    let mut devices = Vec::new();
    for ordinal in 0..count {
        // SAFETY: plain attribute queries on a valid ordinal; results are checked.
        unsafe {
            let mut dev = 0;
            check(sys::cuDeviceGet(&mut dev, ordinal as i32).result(), format!("GPU {ordinal}"))?;
            let attr = |a| -> Result<i32, ProbeError> {
                let mut v = 0;
                check(sys::cuDeviceGetAttribute(&mut v, a, dev).result(), format!("GPU {ordinal}: attribute {a:?}"))?;
                Ok(v)
            };
            let mut name = [0i8; 256];
            check(sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev).result(), format!("GPU {ordinal}: name"))?;
            let mut memory = 0usize;
            check(sys::cuDeviceTotalMem_v2(&mut memory, dev).result(), format!("GPU {ordinal}: memory"))?;
            use sys::CUdevice_attribute as A;
            gpus.push(Gpu {
                ordinal,
                name: std::ffi::CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned(),
                pci_bus_id: bus_id(ordinal)?,
                memory_bytes: memory as u64,
                sms: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
                compute_capability: (
                    attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32,
                    attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32,
                ),
            });
            devices.push(dev);
        }
    }
    if gpus.is_empty() {
        notes.push("the CUDA driver reports no GPU".into());
    }
    let links = match nvml_links(&gpus) {
        Ok(links) => Some(links),
        Err(e) => {
            notes.push(format!("NVML unavailable ({e}): links unknown"));
            None
        }
    };
    let mut pairs = Vec::new();
    for (i, &a) in devices.iter().enumerate() {
        for (j, &b) in devices.iter().enumerate().filter(|&(j, _)| j != i) {
            // SAFETY: attribute queries on two valid devices; results are checked.
            let (peer, atomics, rank) = unsafe {
                let mut can = 0;
                check(sys::cuDeviceCanAccessPeer(&mut can, a, b).result(), format!("peer access {i}->{j}"))?;
                let p2p = |attr| -> Result<i32, ProbeError> {
                    let mut v = 0;
                    check(sys::cuDeviceGetP2PAttribute(&mut v, attr, a, b).result(), format!("P2P attribute {attr:?} {i}->{j}"))?;
                    Ok(v)
                };
                use sys::CUdevice_P2PAttribute as P;
                (can != 0, p2p(P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED)? != 0, p2p(P::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK)?)
            };
            let link = links.as_ref().map_or(Link::Unknown, |l| l[i][j].clone());
            pairs.push(Pair { src: i, dst: j, peer_access: peer, native_atomics: atomics, performance_rank: rank, link });
        }
    }
    Ok(Topology { gpus, pairs, notes })
}

/// `0000:1B:00.0` and NVML's `00000000:1B:00.0` both become `0000:1b:00.0`.
fn normalise_bus_id(id: &str) -> String {
    let mut parts = id.trim().splitn(2, ':');
    let domain = parts.next().and_then(|d| u32::from_str_radix(d, 16).ok()).unwrap_or(0);
    format!("{domain:04x}:{}", parts.next().unwrap_or("").to_lowercase())
}

/// The link of every ordered pair, indexed by CUDA ordinal (matched to NVML devices by
/// PCI bus id, since the two may order GPUs differently).
fn nvml_links(gpus: &[Gpu]) -> Result<Vec<Vec<Link>>, nvml_wrapper::error::NvmlError> {
    use nvml_wrapper::enum_wrappers::device::{P2pCapabilitiesIndex, P2pStatus, TopologyLevel};
    let nvml = nvml_wrapper::Nvml::init()?;
    let mut by_ordinal = Vec::new();
    for g in gpus {
        let mut found = None;
        for k in 0..nvml.device_count()? {
            if normalise_bus_id(&nvml.device_by_index(k)?.pci_info()?.bus_id) == g.pci_bus_id {
                found = Some(k);
            }
        }
        by_ordinal.push(nvml.device_by_index(found.ok_or(nvml_wrapper::error::NvmlError::NotFound)?)?);
    }
    let index: Vec<u32> = by_ordinal.iter().map(|d| d.index()).collect::<Result<_, _>>()?;
    let max_links = nvml_wrapper_sys::bindings::NVML_NVLINK_MAX_LINKS;
    let mut links = vec![vec![Link::Unknown; gpus.len()]; gpus.len()];
    for (i, a) in by_ordinal.iter().enumerate() {
        // Active links, and where each leads.
        let ends: Vec<Option<String>> = (0..max_links)
            .filter(|&l| a.link_wrapper_for(l).is_active().unwrap_or(false))
            .map(|l| a.link_wrapper_for(l).remote_pci_info().ok().map(|p| normalise_bus_id(&p.bus_id)))
            .collect();
        for (j, b) in by_ordinal.iter().enumerate().filter(|&(j, _)| j != i) {
            let direct = ends.iter().filter(|e| e.as_deref() == Some(gpus[j].pci_bus_id.as_str())).count() as u32;
            let nvlink_p2p = matches!(a.p2p_status(b, P2pCapabilitiesIndex::NvLink), Ok(P2pStatus::Ok));
            links[i][j] = if direct > 0 {
                Link::Nvlink { links: direct, via_switch: false }
            } else if nvlink_p2p && !ends.is_empty() {
                Link::Nvlink { links: ends.len() as u32, via_switch: true }
            } else {
                let level = match nvml.device_by_index(index[j]).and_then(|peer| a.topology_common_ancestor(peer)) {
                    Ok(TopologyLevel::Internal) => "internal",
                    Ok(TopologyLevel::Single) => "PIX",
                    Ok(TopologyLevel::Multiple) => "PXB",
                    Ok(TopologyLevel::HostBridge) => "PHB",
                    Ok(TopologyLevel::Node) => "NODE",
                    Ok(TopologyLevel::System) => "SYS",
                    Err(_) => "?",
                };
                Link::Pcie { level: level.into() }
            };
        }
    }
    Ok(links)
}

impl Topology {
    /// Whether kernels on `src` may access `dst`'s memory (once peer access is enabled).
    pub fn peer_access(&self, src: usize, dst: usize) -> bool {
        self.pairs.iter().any(|p| p.src == src && p.dst == dst && p.peer_access)
    }

    /// The link matrix as nvidia-smi's `topo -m` lays it out, for any number of GPUs.
    pub fn matrix(&self) -> String {
        let n = self.gpus.len();
        let mut out = format!("{:>6}", "");
        (0..n).for_each(|j| out += &format!(" {:>6}", format!("GPU{j}")));
        out += "\n";
        for i in 0..n {
            out += &format!("{:>6}", format!("GPU{i}"));
            for j in 0..n {
                let cell = if i == j {
                    "X".to_string()
                } else {
                    self.pairs.iter().find(|p| p.src == i && p.dst == j).map_or("?".into(), |p| p.link.short())
                };
                out += &format!(" {cell:>6}");
            }
            out += "\n";
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(ordinal: usize) -> Gpu {
        Gpu {
            ordinal,
            name: "Test".into(),
            pci_bus_id: format!("0000:{:02x}:00.0", ordinal + 0x1b),
            memory_bytes: 1 << 30,
            sms: 132,
            compute_capability: (9, 0),
        }
    }

    #[test]
    fn matrix_lays_out_any_number_of_gpus() {
        // Four GPUs: two NVLink pairs joined by PCIe across sockets.
        let gpus: Vec<Gpu> = (0..4).map(gpu).collect();
        let mut pairs = Vec::new();
        for i in 0..4 {
            for j in (0..4).filter(|&j| j != i) {
                let link = if i / 2 == j / 2 { Link::Nvlink { links: 4, via_switch: false } } else { Link::Pcie { level: "SYS".into() } };
                pairs.push(Pair { src: i, dst: j, peer_access: i / 2 == j / 2, native_atomics: false, performance_rank: 0, link });
            }
        }
        let t = Topology { gpus, pairs, notes: Vec::new() };
        let m = t.matrix();
        let rows: Vec<&str> = m.lines().collect();
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[1].split_whitespace().collect::<Vec<_>>(), ["GPU0", "X", "NV4", "SYS", "SYS"]);
        assert_eq!(rows[4].split_whitespace().collect::<Vec<_>>(), ["GPU3", "SYS", "SYS", "NV4", "X"]);
    }

    #[test]
    fn bus_ids_from_cuda_and_nvml_agree() {
        assert_eq!(normalise_bus_id("0000:1B:00.0"), normalise_bus_id("00000000:1B:00.0"));
        assert_eq!(normalise_bus_id("00000000:1B:00.0"), "0000:1b:00.0");
    }

    #[test]
    fn probe_without_a_gpu_is_empty_not_an_error() {
        let t = probe().expect("probing never fails without a GPU");
        if t.gpus.is_empty() {
            assert!(!t.notes.is_empty());
            assert!(t.pairs.is_empty());
        }
    }
}
