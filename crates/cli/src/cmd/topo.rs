//! `chatty topo`: the GPUs of this machine and how each pair is linked.

use anyhow::Result;

use crate::args::TopoArgs;

pub fn run(a: &TopoArgs) -> Result<i32> {
    let t = chatty_comm::probe()?;
    if a.json {
        println!("{}", serde_json::to_string(&t)?);
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
    Ok(0)
}
