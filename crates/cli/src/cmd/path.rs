//! `chatty path`: one shortest path between two vertices, as networkx's
//! `shortest_path(G, u, v)` answers: `run sssp` (or `bfs` with `--hops`) from `--from`
//! with its parents, walked back from `--to`. Any engine `run` opens finds it.

use std::ffi::OsStr;

use anyhow::Result;
use chatty::{harness, Algorithm, Distances, Output};
use chatty_algo::paths;
use serde_json::json;

use super::run::{start, Started};
use crate::args::{PathArgs, RunArgs};

/// `a` as the `run` it is: `run`'s defaults but for the flags `path` has.
fn as_run(a: &PathArgs) -> Result<RunArgs> {
    use clap::{Args, FromArgMatches};
    let alg = if a.hops { Algorithm::Bfs } else { Algorithm::Sssp };
    let command = RunArgs::augment_args(clap::Command::new("path"));
    let words = [OsStr::new("path"), OsStr::new("--"), OsStr::new(alg.name()), a.graph.as_os_str()];
    let mut r = RunArgs::from_arg_matches(&command.try_get_matches_from(words)?)?;
    r.source = Some(a.from.clone());
    r.source_flag = "--from";
    r.parents = true;
    r.engine = a.engine;
    r.verify = a.verify;
    r.json = a.json;
    r.zero_based = a.zero_based;
    r.open = a.open.clone();
    Ok(r)
}

pub fn run(a: &PathArgs, quiet: bool) -> Result<i32> {
    let r = as_run(a)?;
    let Started { mut engine, speaks, p, naming, load_seconds } = start(&r, quiet)?;
    let n = engine.graph_info().n;
    let target = naming.vertex(&a.to, n).map_err(|e| anyhow::anyhow!("--to {e}"))?;
    let alg = r.algorithm[0];
    let opts = harness::Options { trials: 1, verify: a.verify, against: None };
    let report = harness::run(engine.as_mut(), alg, &p, &opts, |_| {}).map_err(chatty::Error::from)?;
    if speaks {
        engine.take_notes().iter().for_each(|note| eprintln!("note: {note}"));
    }
    let parents = report.parents.as_deref().expect("the harness finds parents when asked");
    let path = paths::path(parents, target);
    let t = target as usize;
    let length = path.as_ref().map(|_| match &report.last.output {
        Output::Depths(d) => json!(d[t]),
        Output::Distances(Distances::Int(d)) => json!(d[t]),
        Output::Distances(Distances::Float(d)) => json!(d[t]),
        _ => unreachable!("bfs and sssp answer with distances"),
    });
    let names: Option<Vec<chatty_graph::Name>> = path.as_ref().map(|path| path.iter().map(|&v| naming.name(v)).collect());
    let failed = matches!(report.verification, Some(Err(_)));
    if a.json {
        let graph = a.graph.display().to_string();
        let ctx = super::run::context(&graph, load_seconds, 1, &naming);
        let out = json!({
            "from": a.from,
            "to": a.to,
            "path": names,
            "length": length,
            "edges": path.as_ref().map(|p| p.len() - 1),
            "report": report.json(&ctx),
        });
        println!("{out}");
    } else {
        match (&names, &length) {
            (Some(names), Some(length)) => {
                let shown: Vec<String> = names.iter().map(ToString::to_string).collect();
                let edges = match names.len() - 1 {
                    1 => "1 edge".to_string(),
                    k => format!("{k} edges"),
                };
                println!("Path:                {}", shown.join(" -> "));
                println!("Length:              {length} ({edges}{})", if alg == Algorithm::Bfs { "" } else { ", by weight" });
            }
            _ => println!("No path from {} to {}.", a.from, a.to),
        }
        if let Some(verdict) = &report.verification {
            println!("Verification:        {}", verdict.as_ref().map_or_else(|e| format!("FAIL ({e})"), |()| "PASS".into()));
        }
    }
    Ok(i32::from(failed || path.is_none()))
}
