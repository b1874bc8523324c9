//! Embeds the git commit in the binary for `--version` and the JSON reports.
fn main() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=CHATTY_COMMIT={commit}");
    println!("cargo:rerun-if-changed=../../.git/HEAD");
    // A commit rewrites the branch's file, not the refs directory: watch that file.
    if let Some(branch) =
        std::fs::read_to_string("../../.git/HEAD").ok().and_then(|h| h.strip_prefix("ref: ").map(|r| r.trim().to_string()))
    {
        println!("cargo:rerun-if-changed=../../.git/{branch}");
    }
    println!("cargo:rerun-if-changed=../../.git/packed-refs");
}
