//! The CUDA sources and their compilation by NVRTC.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};

use crate::{GpuError, Result};

/// Every kernel, concatenated in dependency order into one translation unit.
pub const KERNEL_SOURCE: &str = concat!(
    include_str!("kernels/common.cuh"),
    "\n",
    include_str!("kernels/bfs.cu"),
    "\n",
    include_str!("kernels/sssp.cu"),
    "\n",
    include_str!("kernels/pull.cu"),
    "\n",
    include_str!("kernels/wcc.cu"),
    "\n",
    include_str!("kernels/bc.cu"),
    "\n",
    include_str!("kernels/gmpi.cuh"),
    "\n",
    include_str!("kernels/multi.cu"),
);

/// The kernel entry points, for loading and for the compile test.
pub(crate) const FUNCTIONS: &[&str] = &[
    "fill_u32",
    "fill_u64",
    "iota_u32",
    "bfs_level",
    "bfs_persistent",
    "sssp_step",
    "sssp_persistent",
    "depth_to_distance",
    "pull_small",
    "pull_large",
    "pull_huge",
    "pr_init",
    "wcc_sample",
    "wcc_compress",
    "wcc_sample_labels",
    "wcc_finish",
    "bc_batch",
    "mg_bfs_advance",
    "mg_pack",
    "mg_apply",
    "mg_copy_words",
    "mg_sssp_relax",
    "mg_wcc_round",
    "mg_async_traverse",
    "gmpi_pingpong",
    "gmpi_flags",
    "gmpi_rate",
    "gmpi_ordered",
];

/// Compiles every kernel for `arch` (e.g. `compute_90`). Needs NVRTC, not a GPU.
pub fn compile_kernels(arch: &'static str) -> Result<Ptx> {
    // SAFETY: only probes whether the shared library can be opened.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(GpuError::NoNvrtc);
    }
    let opts = CompileOptions { arch: Some(arch), options: vec!["--std=c++17".into()], ..Default::default() };
    compile_ptx_with_opts(KERNEL_SOURCE, opts).map_err(|e| GpuError::Compile(e.to_string()))
}

/// The kernels for `arch`, compiled by NVRTC once per process and architecture
/// (about a second each time), and the seconds this call spent compiling (0 when
/// an earlier [`crate::Gpu::open`] had compiled them).
pub(crate) fn ptx_for(arch: &'static str) -> Result<(Ptx, f64)> {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, String>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().expect("the PTX cache");
    if let Some(src) = cache.get(arch) {
        return Ok((Ptx::from_src(src.clone()), 0.0));
    }
    let start = Instant::now();
    let ptx = compile_kernels(arch)?;
    cache.insert(arch, ptx.to_src());
    Ok((ptx, start.elapsed().as_secs_f64()))
}

/// The `compute_XY` name for a compute capability NVRTC knows.
pub(crate) fn arch_for(major: i32, minor: i32) -> &'static str {
    match (major, minor) {
        (7, 0) => "compute_70",
        (7, 5) => "compute_75",
        (8, 0) => "compute_80",
        (8, 6) => "compute_86",
        (8, 9) => "compute_89",
        (9, 0) => "compute_90",
        (10, 0) => "compute_100",
        (12, 0) => "compute_120",
        (m, _) if m >= 12 => "compute_120",
        (m, _) if m >= 10 => "compute_100",
        (9, _) => "compute_90",
        (8, _) => "compute_80",
        _ => "compute_75",
    }
}
