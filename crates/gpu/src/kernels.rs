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
    "bfs_hub_slots",
    "bfs_hub_masks",
    "sssp_step",
    "sssp_persistent",
    "depth_to_distance",
    "distance_to_depth",
    "pull_small",
    "pull_large",
    "pull_huge",
    "pr_init",
    "wcc_sample",
    "wcc_compress",
    "wcc_sample_labels",
    "wcc_finish",
    "wcc_merge",
    "bc_batch",
    "mg_bfs_advance",
    "mg_pack",
    "mg_apply",
    "mg_copy_words",
    "mg_sssp_relax",
    "mg_sssp_step",
    "mg_async_traverse",
    "gmpi_pingpong",
    "gmpi_flags",
    "gmpi_rate",
    "gmpi_ordered",
];

/// `NoNvrtc` unless NVRTC's shared library can be opened (cudarc panics on a call
/// into a library it cannot load).
fn nvrtc_present() -> Result<()> {
    // SAFETY: only probes whether the shared library can be opened.
    match unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        true => Ok(()),
        false => Err(GpuError::NoNvrtc),
    }
}

/// NVRTC's options besides the architecture.
const OPTIONS: &[&str] = &["--std=c++17"];

/// Compiles every kernel for `arch` (e.g. `compute_90`). Needs NVRTC, not a GPU.
pub fn compile_kernels(arch: &'static str) -> Result<Ptx> {
    nvrtc_present()?;
    let opts = CompileOptions { arch: Some(arch), options: OPTIONS.iter().map(|o| o.to_string()).collect(), ..Default::default() };
    compile_ptx_with_opts(KERNEL_SOURCE, opts).map_err(|e| GpuError::Compile(e.to_string()))
}

/// The kernels for `arch`, compiled by NVRTC once per process and architecture, or
/// read from the on-disk cache of an earlier process (NVRTC takes seconds on this
/// translation unit: every `chatty run --engine gpu` and a Python session's first GPU
/// call paid it), and the seconds this call spent compiling (0 when they came from
/// either cache).
pub(crate) fn ptx_for(arch: &'static str) -> Result<(Ptx, f64)> {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, String>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().expect("the PTX cache");
    if let Some(src) = cache.get(arch) {
        return Ok((Ptx::from_src(src.clone()), 0.0));
    }
    nvrtc_present()?;
    let file = disk_cache::path(arch);
    if let Some(src) = file.as_deref().and_then(disk_cache::read) {
        cache.insert(arch, src.clone());
        return Ok((Ptx::from_src(src), 0.0));
    }
    let start = Instant::now();
    let src = compile_kernels(arch)?.to_src();
    if let Some(file) = &file {
        disk_cache::write(file, &src);
    }
    cache.insert(arch, src.clone());
    Ok((Ptx::from_src(src), start.elapsed().as_secs_f64()))
}

/// Compiled kernels kept between processes: one file per architecture, named by a hash
/// of everything the PTX depends on (source, options, NVRTC's version), ending in the
/// XXH3 of its text, which the reader checks; written atomically. A cache that cannot
/// be read or written is recompiled around, never an error.
mod disk_cache {
    use std::path::{Path, PathBuf};

    use xxhash_rust::xxh3::xxh3_64;

    const CHECKSUM: &str = "\n// chatty-xxh3 ";

    /// `$CHATTY_KERNEL_CACHE` (`off` disables), else `$XDG_CACHE_HOME/chattygraph`,
    /// else `~/.cache/chattygraph`.
    fn dir() -> Option<PathBuf> {
        match std::env::var_os("CHATTY_KERNEL_CACHE") {
            Some(d) if d == "off" => None,
            Some(d) => Some(PathBuf::from(d)),
            None => std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
                .map(|d| d.join("chattygraph")),
        }
    }

    pub(super) fn path(arch: &str) -> Option<PathBuf> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two out-parameters; the caller found NVRTC present.
        unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
        let key = format!("{}\0{arch}\0{}\0nvrtc {major}.{minor}", super::KERNEL_SOURCE, super::OPTIONS.join(" "));
        Some(dir()?.join(format!("kernels-{arch}-{:016x}.ptx", xxh3_64(key.as_bytes()))))
    }

    pub(super) fn read(file: &Path) -> Option<String> {
        let text = std::fs::read_to_string(file).ok()?;
        let (ptx, sum) = text.rsplit_once(CHECKSUM)?;
        (u64::from_str_radix(sum.trim(), 16).ok()? == xxh3_64(ptx.as_bytes())).then(|| ptx.to_string())
    }

    pub(super) fn write(file: &Path, ptx: &str) {
        let Some(dir) = file.parent() else { return };
        let temp = dir.join(format!(".{}.{}", file.file_name().unwrap_or_default().to_string_lossy(), std::process::id()));
        let text = format!("{ptx}{CHECKSUM}{:016x}\n", xxh3_64(ptx.as_bytes()));
        let written = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&temp, text)).and_then(|_| std::fs::rename(&temp, file));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::disk_cache;

    #[test]
    fn the_disk_cache_returns_what_was_written_and_refuses_a_damaged_file() {
        let dir = std::env::temp_dir().join(format!("chatty-kernel-cache-{}", std::process::id()));
        let file = dir.join("kernels-compute_90-test.ptx");
        assert_eq!(disk_cache::read(&file), None);
        disk_cache::write(&file, ".version 8.0\n.entry k {}\n");
        assert_eq!(disk_cache::read(&file).as_deref(), Some(".version 8.0\n.entry k {}\n"));
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("entry k", "entry j")).unwrap();
        assert_eq!(disk_cache::read(&file), None, "a changed PTX fails its checksum");
        std::fs::write(&file, ".version 8.0\n").unwrap();
        assert_eq!(disk_cache::read(&file), None, "a file without a checksum is not trusted");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
