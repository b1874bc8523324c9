//! `chatty broadcast send|recv`: one file to every receiver of a multicast group over
//! chatty-net's reliable broadcast (`chatty_net::file`: checksummed); the receiver
//! writes through an atomic file, so an interrupted or corrupt transfer leaves nothing
//! behind.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use chatty_graph::file::AtomicFile;
use chatty_net::{file, LossModel, Receiver, ReceiverConfig, Sender, SenderConfig, UdpNet};

use crate::args::{BroadcastArgs, BroadcastRole};

pub fn run(a: &BroadcastArgs) -> Result<i32> {
    let group = super::multicast_group("--group", &a.group)?;
    let interface = a.interface.parse().with_context(|| format!("--interface `{}`: expected an IPv4 address", a.interface))?;
    let net = UdpNet::on(interface);
    let recovery = a.scheme;
    let key = super::group_key(a.key.clone(), true)?;
    match &a.role {
        BroadcastRole::Send { file, receivers, wait } => send(&net, SenderConfig::new(group, recovery, key), file, *receivers, *wait),
        BroadcastRole::Recv { output, wait, loss } => {
            if !(0.0..1.0).contains(loss) {
                bail!("--loss {loss}: a loss rate is at least 0 and below 1");
            }
            let mut cfg = ReceiverConfig::new(group, recovery, key);
            cfg.loss = (*loss > 0.0).then(|| LossModel::new(*loss, 1.0, cfg.id));
            receive(&net, cfg, output, *wait)
        }
    }
}

fn send(net: &UdpNet, cfg: SenderConfig, path: &std::path::Path, receivers: usize, wait: u64) -> Result<i32> {
    std::fs::metadata(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let sender = Sender::start(net, cfg)?;
    eprintln!("waiting for {receivers} receiver(s) on {} ...", sender.control_addr());
    let sent = file::send_file(&sender, path, receivers, Duration::from_secs(wait))?;
    println!(
        "sent {} ({} bytes) to {} receiver(s) in {:.3} s ({:.1} MB/s); repairs {}, reads served {}",
        path.display(),
        sent.bytes,
        sent.receivers,
        sent.seconds,
        super::mb_per_s(sent.bytes, sent.seconds),
        sent.stats.repairs,
        sent.stats.reads_served
    );
    Ok(0)
}

fn receive(net: &UdpNet, cfg: ReceiverConfig, output: &std::path::Path, wait: u64) -> Result<i32> {
    let mut out = AtomicFile::create(output)?;
    let receiver = Receiver::start(net, cfg)?;
    let got = file::receive_file(&receiver, &mut out, Duration::from_secs(wait)).context("nothing written")?;
    out.commit()?;
    let st = receiver.leave();
    println!(
        "received {} ({} bytes, xxh3 {}) into {}; recovered {} lost packets",
        got.name,
        got.bytes,
        got.xxh3,
        output.display(),
        st.recovered
    );
    Ok(0)
}
