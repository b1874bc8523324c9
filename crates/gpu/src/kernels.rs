//! The CUDA sources, their kernels' names, and their compilation by NVRTC (through
//! the CUDA layer's caches).

use chatty_comm::cuda::nvrtc;
use cudarc::nvrtc::Ptx;

use crate::Result;

/// Every kernel, concatenated in dependency order into one translation unit (the
/// files `build.rs` lists).
pub const KERNEL_SOURCE: &str = include!(concat!(env!("OUT_DIR"), "/source.rs"));

include!(concat!(env!("OUT_DIR"), "/functions.rs"));

/// Compiles every kernel for `arch` (e.g. `compute_90`). Needs NVRTC, not a GPU.
pub fn compile_kernels(arch: &'static str) -> Result<Ptx> {
    Ok(nvrtc::compile_ptx(KERNEL_SOURCE, arch)?)
}

/// The kernels for a device of compute capability `major.minor`, and the seconds this
/// call spent compiling (0 when they came from a cache): [`nvrtc::module_for`].
pub(crate) fn kernels_for(major: i32, minor: i32) -> Result<(Ptx, f64)> {
    Ok(nvrtc::module_for(KERNEL_SOURCE, major, minor)?)
}
