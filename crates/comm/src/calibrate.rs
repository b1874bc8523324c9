//! Calibration: latency and bandwidth of each transport between each pair of GPUs
//! and between each GPU and the host, by message size, measured with CUDA events after
//! a warm-up (the median of several copies). Transports so far:
//!
//! - `p2p`: `cuMemcpyPeerAsync` with peer access enabled (NVLink or PCIe peer DMA);
//! - `staged`: the same call before peer access is enabled, which the driver stages
//!   through host memory (the WS-VR-style baseline);
//! - `d2h` / `h2d`: copies between a GPU and pinned host memory (the host side of the
//!   paper's zero-copy "UVA" path).
//!
//! Results are cached per machine (host name and GPU bus ids) and reused.

use std::path::PathBuf;

use cudarc::driver::{sys, CudaContext};
use serde::{Deserialize, Serialize};

use crate::topology::Topology;

/// One measurement: `bytes` moved by `transport` from `src` to `dst` (GPU ordinals;
/// `None` is the host) in `seconds` (median).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    pub transport: String,
    pub src: Option<usize>,
    pub dst: Option<usize>,
    pub bytes: u64,
    pub seconds: f64,
    pub gb_per_s: f64,
}

/// A machine's calibration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    pub host: String,
    pub gpus: Vec<String>,
    pub unix_time: u64,
    pub samples: Vec<Sample>,
}

#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error("calibration needs a GPU; {0}")]
    NoGpu(String),
    #[error("{what}: CUDA error {code:?}")]
    Cuda { what: String, code: sys::CUresult },
    #[error("{0}")]
    Io(String),
}

fn ok(r: sys::CUresult, what: impl Into<String>) -> Result<(), CalibrationError> {
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        code => Err(CalibrationError::Cuda { what: what.into(), code }),
    }
}

/// Message sizes: 4 B, then ×16 up to `max` (and `max` itself).
pub fn sizes(max: u64) -> Vec<u64> {
    let mut v: Vec<u64> = std::iter::successors(Some(4u64), |s| s.checked_mul(16)).take_while(|&s| s <= max).collect();
    if v.last() != Some(&max) && max > 4 {
        v.push(max);
    }
    v
}

/// Device memory, freed on drop.
struct DeviceBuf(sys::CUdeviceptr);
impl Drop for DeviceBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc_v2; freeing is valid from any context.
        unsafe { sys::cuMemFree_v2(self.0) };
    }
}

/// Pinned host memory, freed on drop.
struct HostBuf(*mut std::ffi::c_void);
impl Drop for HostBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAllocHost_v2.
        unsafe { sys::cuMemFreeHost(self.0) };
    }
}

/// A stream and two events of one context, destroyed on drop.
struct Timer {
    stream: sys::CUstream,
    start: sys::CUevent,
    end: sys::CUevent,
}
impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: created in `Timer::new`; destroyed once.
        unsafe {
            sys::cuEventDestroy_v2(self.start);
            sys::cuEventDestroy_v2(self.end);
            sys::cuStreamDestroy_v2(self.stream);
        }
    }
}

impl Timer {
    /// In the current context.
    fn new() -> Result<Timer, CalibrationError> {
        let mut t = Timer { stream: std::ptr::null_mut(), start: std::ptr::null_mut(), end: std::ptr::null_mut() };
        // SAFETY: plain creation calls; results checked.
        unsafe {
            ok(sys::cuStreamCreate(&mut t.stream, 1), "creating a stream")?; // CU_STREAM_NON_BLOCKING
            ok(sys::cuEventCreate(&mut t.start, 0), "creating an event")?;
            ok(sys::cuEventCreate(&mut t.end, 0), "creating an event")?;
        }
        Ok(t)
    }

    /// Median seconds of one `copy`, after two untimed ones.
    fn median(&self, reps: usize, copy: &dyn Fn(sys::CUstream) -> sys::CUresult, what: &str) -> Result<f64, CalibrationError> {
        let mut times = Vec::with_capacity(reps);
        // SAFETY: the copy's buffers outlive this call; every call is checked.
        unsafe {
            for _ in 0..2 {
                ok(copy(self.stream), what)?;
            }
            ok(sys::cuStreamSynchronize(self.stream), what)?;
            for _ in 0..reps {
                ok(sys::cuEventRecord(self.start, self.stream), what)?;
                ok(copy(self.stream), what)?;
                ok(sys::cuEventRecord(self.end, self.stream), what)?;
                ok(sys::cuEventSynchronize(self.end), what)?;
                let mut ms = 0f32;
                ok(sys::cuEventElapsedTime_v2(&mut ms, self.start, self.end), what)?;
                times.push(ms as f64 / 1e3);
            }
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }
}

fn reps(bytes: u64) -> usize {
    match bytes {
        0..=1_048_576 => 50,
        1_048_577..=67_108_864 => 10,
        _ => 5,
    }
}

/// Measures every transport for every pair (and GPU↔host) at every size up to
/// `max_bytes`; `progress` hears one line per transport and pair.
pub fn calibrate(topology: &Topology, max_bytes: u64, progress: &mut dyn FnMut(&str)) -> Result<Calibration, CalibrationError> {
    let n = topology.gpus.len();
    if n == 0 {
        return Err(CalibrationError::NoGpu(topology.notes.join("; ")));
    }
    let max_bytes = max_bytes.max(4);
    let ctxs: Vec<_> = (0..n)
        .map(|i| CudaContext::new(i).map_err(|e| CalibrationError::Io(format!("GPU {i}: cannot create a context: {e:?}"))))
        .collect::<Result<_, _>>()?;
    let current = |i: usize| -> Result<(), CalibrationError> {
        // SAFETY: a live primary context of device i.
        ok(unsafe { sys::cuCtxSetCurrent(ctxs[i].cu_ctx()) }, format!("GPU {i}: setting the context"))
    };
    let mut bufs = Vec::new();
    let mut timers = Vec::new();
    for i in 0..n {
        current(i)?;
        let mut p: sys::CUdeviceptr = 0;
        // SAFETY: allocation and fill of `max_bytes` in the current context; checked.
        unsafe {
            ok(sys::cuMemAlloc_v2(&mut p, max_bytes as usize), format!("GPU {i}: allocating {max_bytes} bytes"))?;
            let buf = DeviceBuf(p);
            ok(sys::cuMemsetD8_v2(p, (i as u8).wrapping_add(1), max_bytes as usize), format!("GPU {i}: filling"))?;
            bufs.push(buf);
        }
        timers.push(Timer::new()?);
    }
    let mut host = std::ptr::null_mut();
    // SAFETY: pinned allocation; checked; freed by HostBuf.
    ok(unsafe { sys::cuMemAllocHost_v2(&mut host, max_bytes as usize) }, "allocating pinned host memory")?;
    let host = HostBuf(host);
    let sizes = sizes(max_bytes);
    let mut samples = Vec::new();
    let mut record = |transport: &str, src: Option<usize>, dst: Option<usize>, bytes: u64, seconds: f64| {
        samples.push(Sample { transport: transport.into(), src, dst, bytes, seconds, gb_per_s: bytes as f64 / seconds.max(1e-12) / 1e9 });
    };
    let pairs: Vec<(usize, usize)> = (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).collect();
    // Peer copies before and after peer access is enabled.
    for transport in ["staged", "p2p"] {
        if transport == "p2p" {
            for &(i, j) in &pairs {
                if topology.pairs.iter().any(|p| p.src == i && p.dst == j && p.peer_access) {
                    current(i)?;
                    // SAFETY: enabling access from the current context to a live peer context.
                    match unsafe { sys::cuCtxEnablePeerAccess(ctxs[j].cu_ctx(), 0) } {
                        sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                        code => return Err(CalibrationError::Cuda { what: format!("enabling peer access {i}->{j}"), code }),
                    }
                }
            }
        }
        for &(i, j) in &pairs {
            if transport == "p2p" && !topology.pairs.iter().any(|p| p.src == i && p.dst == j && p.peer_access) {
                continue;
            }
            progress(&format!("{transport} GPU{i} -> GPU{j}"));
            current(i)?;
            for &bytes in &sizes {
                let (dst, src, dctx, sctx) = (bufs[j].0, bufs[i].0, ctxs[j].cu_ctx(), ctxs[i].cu_ctx());
                // SAFETY: both buffers hold at least `bytes`; contexts are live.
                let copy = |s| unsafe { sys::cuMemcpyPeerAsync(dst, dctx, src, sctx, bytes as usize, s) };
                let t = timers[i].median(reps(bytes), &copy, &format!("{transport} {i}->{j} {bytes} B"))?;
                record(transport, Some(i), Some(j), bytes, t);
            }
        }
    }
    for i in 0..n {
        current(i)?;
        for transport in ["d2h", "h2d"] {
            progress(&format!("{transport} GPU{i}"));
            for &bytes in &sizes {
                let (dev, h) = (bufs[i].0, host.0);
                // SAFETY: both buffers hold at least `bytes`; the pinned buffer is mapped for every context.
                let copy = |s| unsafe {
                    if transport == "d2h" {
                        sys::cuMemcpyDtoHAsync_v2(h, dev, bytes as usize, s)
                    } else {
                        sys::cuMemcpyHtoDAsync_v2(dev, h, bytes as usize, s)
                    }
                };
                let t = timers[i].median(reps(bytes), &copy, &format!("{transport} GPU{i} {bytes} B"))?;
                let (src, dst) = if transport == "d2h" { (Some(i), None) } else { (None, Some(i)) };
                record(transport, src, dst, bytes, t);
            }
        }
    }
    drop(timers);
    drop(bufs);
    Ok(Calibration {
        host: host_name(),
        gpus: topology.gpus.iter().map(|g| g.pci_bus_id.clone()).collect(),
        unix_time: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        samples,
    })
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into())
}

/// Where this machine's calibration is kept: `$CHATTY_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/chatty`, else `~/.cache/chatty`.
pub fn cache_path() -> PathBuf {
    let dir = std::env::var_os("CHATTY_CACHE_DIR").map(PathBuf::from).unwrap_or_else(|| {
        std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(|| PathBuf::from("."))
            .join("chatty")
    });
    dir.join(format!("calibration-{}.json", host_name()))
}

/// The cached calibration, if it was made on this machine with these GPUs and covers
/// `max_bytes`.
pub fn load_cached(topology: &Topology, max_bytes: u64) -> Option<Calibration> {
    let c: Calibration = serde_json::from_slice(&std::fs::read(cache_path()).ok()?).ok()?;
    let gpus: Vec<String> = topology.gpus.iter().map(|g| g.pci_bus_id.clone()).collect();
    let covers = c.samples.iter().any(|s| s.bytes >= max_bytes);
    (c.host == host_name() && c.gpus == gpus && covers).then_some(c)
}

/// Writes the cache (through a temporary file, so a crash leaves the old one).
pub fn save(c: &Calibration) -> Result<PathBuf, CalibrationError> {
    let path = cache_path();
    let io = |e: std::io::Error| CalibrationError::Io(format!("{}: cannot write the calibration cache: {e}", path.display()));
    std::fs::create_dir_all(path.parent().expect("a file in a directory")).map_err(io)?;
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, serde_json::to_vec_pretty(c).expect("serialisable")).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_span_4_bytes_to_the_maximum() {
        assert_eq!(sizes(256 << 20), vec![4, 64, 1024, 16384, 262144, 4194304, 67108864, 268435456]);
        assert_eq!(sizes(1000), vec![4, 64, 1000]);
        assert_eq!(sizes(4), vec![4]);
    }

    #[test]
    fn without_a_gpu_calibration_says_so() {
        let t = Topology { gpus: Vec::new(), pairs: Vec::new(), notes: vec!["no CUDA driver".into()] };
        let e = calibrate(&t, 1 << 20, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("needs a GPU") && e.contains("no CUDA driver"), "{e}");
    }
}
