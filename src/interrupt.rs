//! Ctrl-C and SIGTERM for the whole process. Once installed, a signal is remembered until the
//! process ends, so one that arrives between two points, or while a table loads, still stops
//! the sweep at the next point instead of being lost.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static INSTALLED: Once = Once::new();

extern "C" fn on_signal(_: libc::c_int) {
    // Only async-signal-safe work here: an atomic swap, and `_exit` when the user insists
    // (a second Ctrl-C while the first is being honoured); managed servers follow through
    // their parent-death signal.
    if REQUESTED.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe and takes no pointers.
        unsafe { libc::_exit(130) };
    }
}

/// Replaces the default action of SIGINT and SIGTERM (end the process) by a request that
/// `requested` reports; a second signal ends the process with status 130. Idempotent.
pub fn install() {
    INSTALLED.call_once(|| {
        // SAFETY: a zeroed sigaction with an empty mask and a handler that only stores an
        // atomic is a valid argument; the previous action is not needed.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            // Blocking reads of the worker threads restart; the run notices the request.
            sa.sa_flags = libc::SA_RESTART;
            libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
            libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
        }
    });
}

/// Whether SIGINT or SIGTERM arrived since `install`.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
