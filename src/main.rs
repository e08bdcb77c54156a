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
    // A sweep goes on when its reader closes the pipe (`run | head`): its results directory is
    // what it is for. Other commands die quietly as above.
    let shield = matches!(cli.command, sweepbench::cmd::cli::Command::Run { .. })
        .then(sweepbench::shield::install);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let code = runtime.block_on(sweepbench::run(cli));
    // Workers of a forced shutdown may still hold sockets; do not wait for them.
    runtime.shutdown_background();
    if let Some(s) = shield {
        s.finish();
    }
    std::process::exit(code);
}
