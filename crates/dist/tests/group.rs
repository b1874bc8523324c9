//! The MPI communicator as the multi-GPU engine's [`chatty_comm::Group`] (its
//! collectives across processes), on 2 ranks under `mpirun`: this test starts itself
//! again as the ranks.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chatty_comm::messaging::{Copier, HeapRegion, HostMemory, Hub, Kind, Layout, Region, Request, Status, ANY_SOURCE, INLINE_BYTES};
use chatty_comm::{Group, Processes};

const CHILD: &str = "CHATTY_GROUP_TEST_RANK";

#[test]
fn the_communicator_sums_and_gathers_across_processes() {
    if std::env::var_os(CHILD).is_some() {
        return as_a_rank();
    }
    let me = std::env::current_exe().unwrap();
    let o = Command::new("mpirun")
        .args(["--oversubscribe", "--timeout", "120", "-np", "2", "-x", CHILD])
        .arg(&me)
        .args(["--exact", "the_communicator_sums_and_gathers_across_processes", "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .output()
        .expect("mpirun runs");
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{text}");
    assert_eq!(text.matches("rank checks passed").count(), 2, "{text}");
}

fn as_a_rank() {
    let comm = chatty_dist::start(7).expect("MPI starts");
    let (rank, size) = (Group::rank(&comm), Group::size(&comm));
    assert_eq!(size, 2);
    assert_eq!(Group::sum_u64(&comm, &[rank as u64 + 1, 10, u64::MAX]), vec![3, 20, u64::MAX - 1], "wrapping sums");
    assert_eq!(Group::sum_f64(&comm, &[0.5, rank as f64]), vec![1.0, 1.0]);
    // Different lengths, concatenated in rank order.
    let mine: Vec<u8> = if rank == 0 { vec![1, 2, 3] } else { vec![4, 5, 6, 7, 8] };
    let mut all = vec![0u8; 8];
    comm.all_gather_into(&mine, &mut all).unwrap();
    assert_eq!(all, [1, 2, 3, 4, 5, 6, 7, 8]);
    // A wrong total is an error on every rank, not a hang or an overrun.
    let err = comm.all_gather_into(&mine, &mut [0u8; 7]).unwrap_err();
    assert!(err.to_string().contains("8 bytes for 7 places"), "{err}");
    let processes = Processes(std::sync::Arc::new(comm));
    assert_eq!(processes.counts(rank as u64 * 2 + 1), vec![1, 3]);
    // Rank 0 holds parts 0 and 1, rank 1 part 2.
    let (first, mine) = if rank == 0 { (0, vec![5, 6]) } else { (2, vec![7]) };
    assert_eq!(processes.gather_parts(3, first, &mine), vec![5, 6, 7]);
    messages_cross_the_link(processes.0.as_ref());
    gmpi_ranks_message_across_processes(processes.0.as_ref());
    println!("rank checks passed");
    drop(processes);
    chatty_dist::finish();
}

/// Point to point through the job's link: in order, from empty to 1 MiB.
fn messages_cross_the_link(group: &dyn Group) {
    let link = group.link().expect("MPI provides MPI_THREAD_MULTIPLE");
    let (me, other) = (group.rank(), 1 - group.rank());
    let sizes = [0usize, 1, 24, 1 << 20, 7];
    for (i, &len) in sizes.iter().enumerate() {
        link.send(other, (0..len).map(|b| (b + i + me) as u8).collect()).unwrap();
    }
    assert!(link.send(2, vec![1]).is_err(), "no process 2");
    let start = Instant::now();
    let mut got = Vec::new();
    while got.len() < sizes.len() {
        match link.poll().unwrap() {
            Some(m) => got.push(m),
            None => assert!(start.elapsed() < Duration::from_secs(60), "only {} of the messages arrived", got.len()),
        }
    }
    for (i, ((from, bytes), &len)) in got.into_iter().zip(&sizes).enumerate() {
        assert_eq!(from, other);
        assert!(bytes.len() == len && bytes.iter().enumerate().all(|(b, &x)| x == (b + i + other) as u8), "message {i}");
    }
    group.sum_u64(&[0]);
}

/// GMPI's ranks 0 and 1 in process 0, 2 and 3 in process 1, host threads posting as
/// GPU threads do: a ping-pong across the processes in small (eager) and large
/// messages, a receive from any source, and one that nothing matches.
fn gmpi_ranks_message_across_processes(group: &dyn Group) {
    let me = group.rank();
    let layout = Layout::new(8, 256);
    let regions = (0..2).map(|_| Arc::new(HeapRegion::new(layout.bytes())) as Arc<dyn Region>).collect();
    let timeout = Duration::from_millis(500);
    let hub = Hub::spanning(layout, regions, timeout, 2 * me as u32, vec![0, 0, 1, 1], group.link().unwrap()).unwrap();
    let memory = HostMemory((0..4u8).map(|r| Mutex::new((0..16384u32).map(|i| (i as u8) ^ (r * 64)).collect())).collect());
    let stop = AtomicBool::new(false);
    let wait = |rank: u32, request: u32| {
        let start = Instant::now();
        loop {
            match hub.status(rank, request) {
                Status::Pending => assert!(start.elapsed() < Duration::from_secs(60), "request {request} of rank {rank} never completed"),
                s => return s,
            }
            std::thread::yield_now();
        }
    };
    let post = |rank: u32, r: Request| assert!(hub.ring(rank).push(r, &|| false));
    let request = |kind, peer, tag, request, bytes: u64, addr: u64| {
        let inline = (kind == Kind::Send && bytes as usize <= INLINE_BYTES).then(|| {
            let mut d = [0u8; INLINE_BYTES];
            memory.read(me as u32 + 1, addr, &mut d[..bytes as usize]).unwrap();
            d
        });
        Request { kind, peer, tag, request, bytes, addr, inline }
    };
    std::thread::scope(|s| {
        let proxies: Vec<_> = (0..2)
            .map(|i| {
                s.spawn({
                    let (hub, memory, stop) = (&hub, &memory, &stop);
                    move || hub.serve(2 * me as u32 + i, memory, stop)
                })
            })
            .collect();
        // Rank 1 (process 0) and rank 2 (process 1) play; 40 rounds of 16 and 4,000 bytes.
        let (mine, theirs) = if me == 0 { (1, 2) } else { (2, 1) };
        for round in 0..40u32 {
            let bytes = if round % 2 == 0 { 16 } else { 4000 };
            let at = 8 * round as u64;
            if me == 0 {
                post(mine, request(Kind::Send, theirs, round, 2 * round, bytes, at));
                post(mine, request(Kind::Recv, theirs, round, 2 * round + 1, bytes, 4096 + at));
            } else {
                post(mine, request(Kind::Recv, ANY_SOURCE, round, 2 * round, bytes, 4096 + at));
                assert_eq!(wait(mine, 2 * round), Status::Done);
                post(mine, request(Kind::Send, theirs, round, 2 * round + 1, bytes, 4096 + at));
            }
            // A small send is complete once posted: no record is written for it.
            if me == 0 || bytes > INLINE_BYTES as u64 {
                assert_eq!(wait(mine, 2 * round + 1), Status::Done, "round {round}");
            }
        }
        // Nothing is ever sent to this one: it times out.
        if me == 1 {
            post(3, request(Kind::Recv, 0, 999, 0, 8, 0));
            assert_eq!(wait(3, 0), Status::TimedOut);
        }
        group.sum_u64(&[0]);
        stop.store(true, Ordering::SeqCst);
        let stats: Vec<_> = proxies.into_iter().map(|p| p.join().unwrap()).collect();
        let forwarded: u64 = stats.iter().map(|s| s.forwarded).sum();
        assert_eq!(forwarded, 40, "process {me}: {stats:?}");
    });
    // What came back to rank 1 is what it sent, through rank 2's memory.
    if me == 0 {
        let (mut sent, mut back) = (vec![0; 4000], vec![0; 4000]);
        memory.read(1, 312, &mut sent).unwrap();
        memory.read(1, 4096 + 312, &mut back).unwrap();
        assert_eq!(back, sent);
    }
    group.sum_u64(&[0]);
}
