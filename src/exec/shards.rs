//! Worker threads for a run: a set of single-threaded tokio runtimes, each on its own OS
//! thread, that the run spreads its connections over. With few connections each one gets a
//! thread of its own, so a response wakes exactly the thread that waits for it (as with
//! sysbench's blocking threads) instead of passing through a shared scheduler.

use std::thread::JoinHandle;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

pub struct Shards {
    handles: Vec<Handle>,
    stops: Vec<oneshot::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl Shards {
    /// `count` runtimes, each driven by its own thread until the `Shards` is dropped.
    pub fn new(count: usize) -> std::io::Result<Shards> {
        let mut s = Shards {
            handles: Vec::new(),
            stops: Vec::new(),
            threads: Vec::new(),
        };
        for i in 0..count.max(1) {
            // I/O and timers only: a signal driver would reap child processes on every turn.
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()?;
            let (stop_tx, stop_rx) = oneshot::channel::<()>();
            s.handles.push(rt.handle().clone());
            s.stops.push(stop_tx);
            s.threads.push(
                std::thread::Builder::new()
                    .name(format!("worker-{i}"))
                    .stack_size(256 * 1024)
                    .spawn(move || {
                        rt.block_on(async {
                            let _ = stop_rx.await;
                        });
                        rt.shutdown_background();
                    })?,
            );
        }
        Ok(s)
    }

    /// The runtime that connection `i` runs on.
    pub fn handle(&self, i: usize) -> &Handle {
        &self.handles[i % self.handles.len()]
    }
}

impl Drop for Shards {
    fn drop(&mut self) {
        for s in self.stops.drain(..) {
            let _ = s.send(());
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
