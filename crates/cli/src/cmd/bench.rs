//! `chatty bench broadcast`: runs chatty-net's broadcast benchmark over a grid of
//! scheme × loss × receivers, one receiver process each, and reports a table (or
//! JSON) and, with `--charts`, two SVG charts.

use anyhow::{Context, Result};
use chatty_net::bench::{self, ReceiverArgs, RunResult, RunSpec};

use crate::args::{BenchCommand, BroadcastBenchArgs};
use crate::chart::{line_chart, Series};

pub fn run(c: &BenchCommand) -> Result<i32> {
    match c {
        BenchCommand::Broadcast(a) => broadcast(a),
        BenchCommand::BroadcastReceiver { args } => {
            let args: ReceiverArgs = serde_json::from_str(args).context("bench broadcast-receiver: bad arguments")?;
            let report = bench::receive(&args);
            println!("{}", serde_json::to_string(&report)?);
            Ok(if report.error.is_some() { 2 } else { 0 })
        }
        BenchCommand::MultiGpu(a) => super::multi_bench::bench(a),
        BenchCommand::MultiGpuReport(a) => super::multi_bench::report(a),
        BenchCommand::Messaging(a) => super::messaging_bench::bench(a),
    }
}

fn broadcast(a: &BroadcastBenchArgs) -> Result<i32> {
    let losses = a.loss.clone().unwrap_or_else(|| if a.quick { vec![0.0, 0.01] } else { vec![0.0, 0.001, 0.01, 0.05] });
    let receivers = a.receivers.clone().unwrap_or_else(|| if a.quick { vec![1, 4] } else { vec![1, 2, 4, 8, 16] });
    let latency_messages = a.latency_messages.unwrap_or(if a.quick { 400 } else { 2000 });
    let rate_messages = a.rate_messages.unwrap_or(if a.quick { 2000 } else { 10_000 });
    for &l in &losses {
        anyhow::ensure!((0.0..0.5).contains(&l), "--loss {l}: expected a rate in [0, 0.5)");
    }
    anyhow::ensure!(receivers.iter().all(|&r| (1..=256).contains(&r)), "--receivers: counts from 1 to 256");
    anyhow::ensure!(a.message_bytes >= 8, "--message-bytes: at least 8 (the message number)");
    let exe = std::env::current_exe().context("cannot find the chatty executable to start receivers")?;
    let launch = |args: &ReceiverArgs| bench::receiver_command(&exe, &["bench", "broadcast-receiver"], args);
    anyhow::ensure!(a.window.iter().all(|&w| w >= 4096), "--window: at least 4096 bytes");
    let mut runs: Vec<RunResult> = Vec::new();
    for &window in &a.window {
        for &r in &receivers {
            for &loss in &losses {
                for scheme in a.schemes.iter().map(|s| s.name()) {
                    let spec = RunSpec {
                        scheme: scheme.to_string(),
                        loss,
                        burst: a.burst,
                        receivers: r,
                        message_bytes: a.message_bytes,
                        latency_messages,
                        interval_us: a.interval_us,
                        rate_messages,
                        window_bytes: window,
                    };
                    let res =
                        bench::run(&spec, &launch).with_context(|| format!("run {scheme}, loss {loss}, {r} receivers, window {window}"))?;
                    eprintln!("done: {scheme}, loss {loss}, {r} receivers, window {window}");
                    runs.push(res);
                }
            }
        }
    }
    bench::calibrate_models(&mut runs);
    if !a.json {
        print_table(&runs);
    }
    if a.json {
        let out = serde_json::json!({
            "benchmark": "broadcast",
            "message_bytes": a.message_bytes,
            "latency_messages": latency_messages,
            "interval_us": a.interval_us,
            "rate_messages": rate_messages,
            "window_bytes": a.window,
            "burst": a.burst,
            "commit": env!("CHATTY_COMMIT"),
            "runs": runs,
        });
        println!("{out}");
    }
    if let Some(dir) = &a.charts {
        charts(dir, &runs)?;
    }
    let violations: u64 = runs.iter().map(|r| r.lost + r.duplicated + r.reordered).sum();
    if violations > 0 {
        eprintln!("FAILED: {violations} messages lost, duplicated or reordered at the application");
        return Ok(1);
    }
    Ok(0)
}

fn print_table(runs: &[RunResult]) {
    println!(
        "{:>6} {:>6} {:>4} {:>9} {:>8} {:>8} {:>8} {:>9} {:>7} {:>4} {:>4} {:>5} {:>9} {:>9} {:>9}",
        "scheme",
        "loss",
        "R",
        "window",
        "p50_us",
        "mean_us",
        "p99_us",
        "msgs/s",
        "MB/s",
        "lost",
        "dup",
        "reord",
        "recov_us",
        "peak_KiB",
        "model_KiB"
    );
    for r in runs {
        println!(
            "{:>6} {:>6} {:>4} {:>9} {:>8.0} {:>8.0} {:>8.0} {:>9.0} {:>7.1} {:>4} {:>4} {:>5} {:>9.0} {:>9.0} {:>9.0}",
            r.scheme,
            r.loss,
            r.receivers,
            r.window_limit_bytes,
            r.p50_us,
            r.mean_us,
            r.p99_us,
            r.rate_msgs_per_s,
            r.rate_mb_per_s,
            r.lost,
            r.duplicated,
            r.reordered,
            r.recovery_us_mean,
            r.peak_window_bytes as f64 / 1024.0,
            r.model_window_bytes / 1024.0
        );
    }
    println!("\nRMA-pull against NACK with loss: latency lower by (p50, mean, p99), rate higher by");
    for nack in runs.iter().filter(|r| r.scheme == "nack" && r.loss > 0.0) {
        let same = |r: &&RunResult| {
            r.scheme == "rma" && r.loss == nack.loss && r.receivers == nack.receivers && r.window_limit_bytes == nack.window_limit_bytes
        };
        let Some(rma) = runs.iter().find(same) else { continue };
        let lower = |f: fn(&RunResult) -> f64| 100.0 * (1.0 - f(rma) / f(nack));
        println!(
            "  loss {:>6} R {:>3} window {:>9}: p50 {:>5.1}%  mean {:>5.1}%  p99 {:>5.1}%  rate {:>+6.1}%",
            nack.loss,
            nack.receivers,
            nack.window_limit_bytes,
            lower(|r| r.p50_us),
            lower(|r| r.mean_us),
            lower(|r| r.p99_us),
            100.0 * (rma.rate_msgs_per_s / nack.rate_msgs_per_s - 1.0)
        );
    }
}

/// At the largest window: latency against loss (largest receiver count) and rate
/// against receivers (loss nearest 1%); with several windows, rate against window.
fn charts(dir: &std::path::Path, runs: &[RunResult]) -> Result<()> {
    let max_w = runs.iter().map(|r| r.window_limit_bytes).max().unwrap_or(0);
    let max_r = runs.iter().map(|r| r.receivers).max().unwrap_or(1);
    let loss_1 = runs.iter().map(|r| r.loss).min_by(|a, b| (a - 0.01).abs().total_cmp(&(b - 0.01).abs())).unwrap_or(0.0);
    let schemes = ["nack", "rma"];
    let select = |scheme: &str, keep: &dyn Fn(&RunResult) -> bool, xy: &dyn Fn(&RunResult) -> (f64, f64)| -> Vec<(f64, f64)> {
        runs.iter().filter(|r| r.scheme == scheme && keep(r)).map(xy).collect()
    };
    let latency: Vec<Series> = schemes
        .iter()
        .flat_map(|s| {
            let keep = |r: &RunResult| r.receivers == max_r && r.window_limit_bytes == max_w;
            [
                Series { name: format!("{s} p99"), points: select(s, &keep, &|r| (r.loss * 100.0, r.p99_us)) },
                Series { name: format!("{s} mean"), points: select(s, &keep, &|r| (r.loss * 100.0, r.mean_us)) },
            ]
        })
        .collect();
    let title = format!("Broadcast latency, {max_r} receivers");
    line_chart(&dir.join("broadcast-latency.svg"), &title, "injected loss (%)", "latency (us)", &latency)?;
    let rate: Vec<Series> = schemes
        .iter()
        .map(|s| {
            let keep = |r: &RunResult| r.loss == loss_1 && r.window_limit_bytes == max_w;
            Series { name: s.to_string(), points: select(s, &keep, &|r| (r.receivers as f64, r.rate_msgs_per_s)) }
        })
        .collect();
    let title = format!("Broadcast rate at {}% loss", loss_1 * 100.0);
    line_chart(&dir.join("broadcast-rate.svg"), &title, "receivers", "messages/s", &rate)?;
    if runs.iter().any(|r| r.window_limit_bytes != max_w) {
        let window: Vec<Series> = schemes
            .iter()
            .map(|s| {
                let keep = |r: &RunResult| r.loss == loss_1 && r.receivers == max_r;
                let xy = |r: &RunResult| ((r.window_limit_bytes as f64 / 1024.0).log2(), r.rate_msgs_per_s);
                Series { name: s.to_string(), points: select(s, &keep, &xy) }
            })
            .collect();
        let title = format!("Broadcast rate against window, {}% loss, {max_r} receivers", loss_1 * 100.0);
        line_chart(&dir.join("broadcast-window.svg"), &title, "log2(window limit in KiB)", "messages/s", &window)?;
    }
    Ok(())
}
