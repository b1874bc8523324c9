//! `chatty topo`: the GPUs of this machine, how each pair is linked, and with
//! `--calibrate` what each transport achieves by message size.

use anyhow::{bail, Context, Result};
use chatty_comm::calibrate::{self, Calibration};
use chatty_comm::{Method, Transport};

use crate::args::TopoArgs;

pub fn run(a: &TopoArgs) -> Result<i32> {
    let max =
        chatty_graph::parse_size(&a.max_bytes).with_context(|| format!("--max-bytes `{}`: expected a size like 256M", a.max_bytes))?;
    if a.calibrate && chatty::process::under_mpirun() {
        return calibrate_job(a, max);
    }
    let t = chatty_comm::probe()?;
    let calibration = if a.calibrate {
        Some(match calibrate::load_cached(&t, max).filter(|_| !a.recalibrate) {
            Some(c) => {
                eprintln!("calibration: cached in {} (--recalibrate to measure again)", calibrate::cache_path().display());
                c
            }
            None => {
                let c = calibrate::calibrate(&t, max, &mut |what| eprintln!("calibrating {what} ..."))?;
                let path = calibrate::save(&c)?;
                eprintln!("calibration: saved to {}", path.display());
                c
            }
        })
    } else {
        None
    };
    if a.json {
        println!("{}", serde_json::json!({ "topology": t, "calibration": calibration }));
        return Ok(0);
    }
    println!("GPUs: {}", t.gpus.len());
    for g in &t.gpus {
        let (major, minor) = g.compute_capability;
        println!(
            "  GPU{}  {}  sm_{major}{minor}  {} SMs  {:.1} GB  {}",
            g.ordinal,
            g.name,
            g.sms,
            g.memory_bytes as f64 / 1e9,
            g.pci_bus_id
        );
    }
    if t.gpus.len() > 1 {
        println!("\nLinks (NVn: n NVLinks; PIX/PXB/PHB/NODE/SYS: PCIe, as nvidia-smi topo -m):");
        print!("{}", t.matrix());
        println!("\nPeer access:");
        for p in &t.pairs {
            let via = match &p.link {
                chatty_comm::Link::Nvlink { via_switch: true, .. } => " through an NVLink switch",
                _ => "",
            };
            println!(
                "  GPU{} -> GPU{}: {}, native atomics {}, performance rank {}, link {}{via}",
                p.src,
                p.dst,
                if p.peer_access { "yes" } else { "no" },
                if p.native_atomics { "yes" } else { "no" },
                p.performance_rank,
                p.link.short()
            );
        }
    }
    for n in &t.notes {
        println!("note: {n}");
    }
    if let Some(c) = &calibration {
        print_calibration(c);
    }
    Ok(0)
}

/// Under `mpirun`: the link between the job's processes, each on its local GPU
/// (the multi-GPU engine's exchanges: every part sending to every other), measured
/// by every process and printed by rank 0.
#[cfg(feature = "mpi")]
fn calibrate_job(a: &TopoArgs, max: u64) -> Result<i32> {
    let comm = chatty_dist::start(super::command_digest())?;
    let rank = comm.rank();
    let count = chatty_gpu::Gpu::count();
    if count == 0 {
        bail!("rank {rank}: calibrating needs a GPU (no CUDA driver or no device on this host)");
    }
    let device = chatty::process::local_rank(rank) % count;
    let speaks = rank == 0;
    let parts = calibrate::job_parts(&comm, &[device])?;
    let (c, measured) = calibrate::for_job(&comm, &[device], &parts, max, a.recalibrate, &mut |what| {
        if speaks {
            eprintln!("calibrating {what} ...")
        }
    })?;
    if !speaks {
        return Ok(0);
    }
    let path = calibrate::job_cache_path(&c.gpus);
    match measured {
        true => eprintln!("calibration: saved to {}", path.display()),
        false => eprintln!("calibration: cached in {} (--recalibrate to measure again)", path.display()),
    }
    if a.json {
        println!("{}", serde_json::json!({ "job_calibration": c }));
        return Ok(0);
    }
    println!("Parts of the job: {}", c.gpus.len());
    for (i, part) in c.gpus.iter().enumerate() {
        println!("  part {i}  {part}");
    }
    print_calibration(&c);
    Ok(0)
}

#[cfg(not(feature = "mpi"))]
fn calibrate_job(_: &TopoArgs, _: u64) -> Result<i32> {
    bail!("topo --calibrate under mpirun measures the link between processes, which needs a build with `--features mpi`")
}

/// One table per endpoint pair: a row per size, latency and bandwidth per transport.
fn print_calibration(c: &Calibration) {
    let name = |e: Option<usize>| e.map_or("host".to_string(), |g| format!("GPU{g}"));
    let route = |src, dst| match (src, dst) {
        (None, None) => "every part -> every other part, an exchange (bytes a part; GB/s: what each part receives)".to_string(),
        _ => format!("{} -> {}", name(src), name(dst)),
    };
    let mut routes: Vec<(Option<usize>, Option<usize>)> = c.samples.iter().map(|s| (s.src, s.dst)).collect();
    routes.sort();
    routes.dedup();
    for (src, dst) in routes {
        let here: Vec<_> = c.samples.iter().filter(|s| s.src == src && s.dst == dst).collect();
        let mut transports: Vec<Method> = Vec::new();
        for s in &here {
            if !transports.contains(&s.transport) {
                transports.push(s.transport);
            }
        }
        let mut sizes: Vec<u64> = here.iter().map(|s| s.bytes).collect();
        sizes.sort();
        sizes.dedup();
        println!("\n{} (best: the fastest measured at that size)", route(src, dst));
        print!("{:>12}", "bytes");
        transports.iter().for_each(|t| print!(" {:>22}", format!("{} us | GB/s", t.name())));
        println!(" {:>15}", "best");
        for b in sizes {
            print!("{b:>12}");
            for t in &transports {
                match here.iter().find(|s| s.bytes == b && s.transport == *t) {
                    Some(s) => print!(" {:>22}", format!("{:.2} | {:.2}", s.seconds * 1e6, s.gb_per_s)),
                    None => print!(" {:>22}", "-"),
                }
            }
            // Between processes, the choice `--comm auto` makes (mpi-host is no exchange).
            let best = match (src, dst) {
                (None, None) => Some(chatty_comm::choose_across(Some(c), &[b], &[Transport::Mpi, Transport::Nccl]).method()),
                _ => c.best(src, dst, b).map(|(t, _)| t),
            };
            println!(" {:>15}", best.map_or("-", |t| t.name()));
        }
    }
}
