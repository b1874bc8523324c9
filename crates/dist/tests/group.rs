//! The MPI communicator as the multi-GPU engine's [`chatty_comm::Group`] (its
//! collectives across processes), on 2 ranks under `mpirun`: this test starts itself
//! again as the ranks.

use std::process::Command;

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
    println!("rank checks passed");
    drop(processes);
    chatty_dist::finish();
}
