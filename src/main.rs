//! The `sweepbench` binary: parses the command line, runs it on a tokio runtime, exits with its code.
use clap::Parser;

fn main() {
    // Die quietly on a closed pipe (`sweepbench bench … | head`), as C tools like sysbench do,
    // instead of panicking inside println!.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = sweepbench::cmd::cli::Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let code = runtime.block_on(sweepbench::run(cli));
    // Workers of a forced shutdown may still hold sockets; do not wait for them.
    runtime.shutdown_background();
    std::process::exit(code);
}
