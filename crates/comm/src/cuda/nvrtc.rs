//! NVRTC as the CUDA layer uses it: sources compiled to machine code (CUBIN) for
//! exactly the device's architecture, or PTX where NVRTC cannot make that; once per
//! process, and kept on disk between processes (NVRTC takes seconds on the GPU
//! engine's translation unit).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};

use super::CudaError;

type Result<T> = std::result::Result<T, CudaError>;

/// `NoNvrtc` unless NVRTC's shared library can be opened (cudarc panics on a call
/// into a library it cannot load).
fn nvrtc_present() -> Result<()> {
    // SAFETY: only probes whether the shared library can be opened.
    match unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        true => Ok(()),
        false => Err(CudaError::NoNvrtc),
    }
}

/// NVRTC's options besides the architecture.
const OPTIONS: &[&str] = &["--std=c++17"];

/// Compiles `source` to PTX for `arch` (e.g. `compute_90`). Needs NVRTC, not a GPU.
pub fn compile_ptx(source: &str, arch: &'static str) -> Result<Ptx> {
    nvrtc_present()?;
    let opts = CompileOptions { arch: Some(arch), options: OPTIONS.iter().map(|o| o.to_string()).collect(), ..Default::default() };
    compile_ptx_with_opts(source, opts).map_err(|e| CudaError::Compile(e.to_string()))
}

/// NVRTC's machine code (CUBIN) for exactly `arch` (e.g. `sm_90`): what the driver
/// loads without compiling. Needs NVRTC, not a GPU.
pub fn compile_cubin(source: &str, arch: &str) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result, sys};
    nvrtc_present()?;
    let src = std::ffi::CString::new(source).map_err(|_| CudaError::Compile("the source holds a NUL byte".into()))?;
    let failed = |what: &str, e: result::NvrtcError| CudaError::Compile(format!("{what} for {arch}: {e:?}"));
    let prog = result::create_program(&src, None).map_err(|e| failed("creating the program", e))?;
    let options: Vec<String> = std::iter::once(format!("--gpu-architecture={arch}")).chain(OPTIONS.iter().map(|o| o.to_string())).collect();
    // SAFETY: `prog` is live until destroyed below; the CUBIN buffer is sized by NVRTC.
    unsafe {
        let compiled = result::compile_program(prog, &options).map_err(|e| {
            let log = result::get_program_log(prog).unwrap_or_default();
            let log = std::ffi::CStr::from_ptr(log.as_ptr()).to_string_lossy().into_owned();
            failed(&format!("compiling ({})", log.trim()), e)
        });
        let cubin = compiled.and_then(|_| {
            let mut size = 0usize;
            sys::nvrtcGetCUBINSize(prog, &mut size).result().map_err(|e| failed("sizing the CUBIN", e))?;
            let mut cubin = vec![0u8; size];
            sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast()).result().map_err(|e| failed("reading the CUBIN", e))?;
            Ok(cubin)
        });
        let _ = result::destroy_program(prog);
        cubin
    }
}

/// Compiled kernels, as the driver takes them.
#[derive(Clone)]
enum Compiled {
    /// Machine code for one architecture.
    Cubin(Vec<u8>),
    /// PTX, which the driver compiles when it loads it.
    Ptx(String),
}

impl Compiled {
    fn into_module(self) -> Ptx {
        match self {
            Compiled::Cubin(c) => Ptx::from_binary(c),
            Compiled::Ptx(p) => Ptx::from_src(p),
        }
    }
}

/// The kernels of `source` for a device of compute capability `major.minor`, and the
/// seconds this call spent compiling (0 when they came from a cache). Machine code for exactly its
/// architecture, so that loading them needs no compiling by the driver (3.5 s a process
/// where the driver's own cache is empty, docs/benchmarks/wall-time.md); PTX for the
/// nearest architecture NVRTC knows where it cannot make that. Compiled by NVRTC once
/// per process, and kept on disk between processes (NVRTC takes seconds on this
/// translation unit).
pub fn module_for(source: &'static str, major: i32, minor: i32) -> Result<(Ptx, f64)> {
    type Key = (usize, i32, i32);
    static CACHE: OnceLock<Mutex<HashMap<Key, Compiled>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // A source is a `'static` string of the binary: its address names it.
    let key = (source.as_ptr() as usize, major, minor);
    if let Some(k) = cache.get(&key) {
        return Ok((k.clone().into_module(), 0.0));
    }
    nvrtc_present()?;
    let sm = format!("sm_{major}{minor}");
    let (cubin_file, ptx_file) = (disk_cache::path(source, &sm, "cubin"), disk_cache::path(source, arch_for(major, minor), "ptx"));
    let cached = cubin_file.as_deref().and_then(disk_cache::read).map(Compiled::Cubin).or_else(|| {
        let ptx = ptx_file.as_deref().and_then(disk_cache::read)?;
        String::from_utf8(ptx).ok().map(Compiled::Ptx)
    });
    if let Some(k) = cached {
        cache.insert(key, k.clone());
        return Ok((k.into_module(), 0.0));
    }
    let start = Instant::now();
    let (compiled, file) = match compile_cubin(source, &sm) {
        Ok(cubin) => (Compiled::Cubin(cubin), cubin_file),
        Err(_) => (Compiled::Ptx(compile_ptx(source, arch_for(major, minor))?.to_src()), ptx_file),
    };
    if let Some(file) = &file {
        match &compiled {
            Compiled::Cubin(c) => disk_cache::write(file, c),
            Compiled::Ptx(p) => disk_cache::write(file, p.as_bytes()),
        }
    }
    cache.insert(key, compiled.clone());
    Ok((compiled.into_module(), start.elapsed().as_secs_f64()))
}

/// Compiled kernels kept between processes: one file per architecture and form, named
/// by a hash of everything the code depends on (source, options, NVRTC's version),
/// ending in the XXH3 of its contents, which the reader checks; written atomically. A
/// cache that cannot be read or written is recompiled around, never an error.
mod disk_cache {
    use std::path::{Path, PathBuf};

    use xxhash_rust::xxh3::xxh3_64;

    const CHECKSUM: &[u8] = b"\n// chatty-xxh3 ";

    /// `$CHATTY_KERNEL_CACHE` (`off` disables), else `$XDG_CACHE_HOME/chattygraph`,
    /// else `~/.cache/chattygraph`.
    fn dir() -> Option<PathBuf> {
        match std::env::var_os("CHATTY_KERNEL_CACHE") {
            Some(d) if d == "off" => None,
            Some(d) => Some(PathBuf::from(d)),
            None => super::super::user_cache_dir().map(|d| d.join("chattygraph")),
        }
    }

    /// The file of the kernels for `arch` (`sm_90`: CUBIN; `compute_90`: PTX) with
    /// extension `form`.
    pub(super) fn path(source: &str, arch: &str, form: &str) -> Option<PathBuf> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two out-parameters; the caller found NVRTC present.
        unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
        let key = format!("{source}\0{arch}\0{}\0nvrtc {major}.{minor}", super::OPTIONS.join(" "));
        Some(dir()?.join(format!("kernels-{arch}-{:016x}.{form}", xxh3_64(key.as_bytes()))))
    }

    pub(super) fn read(file: &Path) -> Option<Vec<u8>> {
        let mut bytes = std::fs::read(file).ok()?;
        let at = bytes.windows(CHECKSUM.len()).rposition(|w| w == CHECKSUM)?;
        let sum = std::str::from_utf8(&bytes[at + CHECKSUM.len()..]).ok()?;
        let sum = u64::from_str_radix(sum.trim(), 16).ok()?;
        bytes.truncate(at);
        (sum == xxh3_64(&bytes)).then_some(bytes)
    }

    pub(super) fn write(file: &Path, code: &[u8]) {
        let Some(dir) = file.parent() else { return };
        let temp = dir.join(format!(".{}.{}", file.file_name().unwrap_or_default().to_string_lossy(), std::process::id()));
        let mut bytes = code.to_vec();
        bytes.extend_from_slice(CHECKSUM);
        bytes.extend_from_slice(format!("{:016x}\n", xxh3_64(code)).as_bytes());
        let written = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&temp, bytes)).and_then(|_| std::fs::rename(&temp, file));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
    }
}

/// The `compute_XY` name for a compute capability NVRTC knows.
pub fn arch_for(major: i32, minor: i32) -> &'static str {
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
    use super::{compile_cubin, disk_cache};

    const SOURCE: &str = "extern \"C\" __global__ void k(unsigned int* a) { a[threadIdx.x] = 1; }";

    #[test]
    fn the_disk_cache_returns_what_was_written_and_refuses_a_damaged_file() {
        let dir = std::env::temp_dir().join(format!("chatty-kernel-cache-{}", std::process::id()));
        let file = dir.join("kernels-compute_90-test.ptx");
        assert_eq!(disk_cache::read(&file), None);
        disk_cache::write(&file, b".version 8.0\n.entry k {}\n");
        assert_eq!(disk_cache::read(&file).as_deref(), Some(&b".version 8.0\n.entry k {}\n"[..]));
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("entry k", "entry j")).unwrap();
        assert_eq!(disk_cache::read(&file), None, "a changed PTX fails its checksum");
        std::fs::write(&file, ".version 8.0\n").unwrap();
        assert_eq!(disk_cache::read(&file), None, "a file without a checksum is not trusted");
        let binary: Vec<u8> = (0..=255u8).chain(b"\n// chatty-xxh3 0000\n".iter().copied()).collect();
        disk_cache::write(&file, &binary);
        assert_eq!(disk_cache::read(&file), Some(binary), "binary code, even holding the marker, reads back whole");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The machine code the GPU engine loads: an ELF image for the architecture asked.
    #[test]
    fn nvrtc_makes_machine_code_for_the_device_architecture() {
        match compile_cubin(SOURCE, "sm_90") {
            Ok(cubin) => assert_eq!(&cubin[..4], b"\x7fELF", "a CUBIN is an ELF image"),
            Err(crate::cuda::CudaError::NoNvrtc) if std::env::var("CI").is_err() => eprintln!("note: NVRTC not found; CI installs it"),
            Err(e) => panic!("{e}"),
        }
        assert!(compile_cubin(SOURCE, "sm_1").is_err(), "an architecture NVRTC does not know is an error, not a panic");
    }
}
