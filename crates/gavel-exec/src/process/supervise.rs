//! The machinery under [`run_with`](super::run_with) and [`run_test`](super::run_test): start
//! the child in its own process group, feed stdin and drain the pipes on threads, watch the two
//! clocks and the cancel flag, and at the end kill the group and collect what the threads read.
//!
//! The child's exit is noticed with `waitid(WNOWAIT)`, which leaves it unreaped: while it is a
//! zombie its process id, which is also the group's id, cannot be given to another process, so
//! the `killpg` that follows can only reach what the child left behind.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use super::capped::Capped;
use super::{ProcessError, ProcessSpec, Timeout};

/// How long the pipe readers get, after the group is killed, to read what is left. Only a
/// process that left the group (`setsid`) can keep a pipe open longer; it is not waited for.
const READER_GRACE: Duration = Duration::from_secs(1);

/// After the child has exited, how long its output pipe may stay quiet before reading ends
/// (what the child wrote is in the pipe already; only a descendant holding it open writes
/// later, and what it writes after the step is not the step's).
const DRAIN_QUIET: Duration = Duration::from_millis(200);

/// Why watching stopped.
pub(crate) enum Ending {
    Exited,
    Cancelled,
    Timeout(Timeout),
}

enum Event {
    Line(String),
    Activity,
    PrimaryClosed,
}

/// What [`Supervised::finish`] collected.
pub(crate) struct Finished {
    pub(crate) status: std::io::Result<ExitStatus>,
    pub(crate) stdin_error: Option<String>,
    pub(crate) kill_error: Option<String>,
    /// From the start until the child ended (or was killed).
    pub(crate) elapsed: Duration,
}

/// A running child and the threads that serve it.
pub(crate) struct Supervised {
    pub(crate) child: Child,
    started: Instant,
    tx: Option<Sender<Event>>,
    rx: Receiver<Event>,
    primary_open: bool,
    readers: Vec<JoinHandle<()>>,
    stdin: Option<JoinHandle<Option<String>>>,
    finished: bool,
}

/// The command for `spec`: its own process group, stdin piped, the environment adjusted.
pub(crate) fn command(spec: &ProcessSpec) -> Command {
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args).stdin(Stdio::piped()).process_group(0);
    for name in &spec.env_remove {
        cmd.env_remove(name);
    }
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    cmd
}

impl Supervised {
    /// Spawns `cmd` (built by [`command`]) and starts writing `spec.stdin` to it.
    pub(crate) fn start(mut cmd: Command, spec: &ProcessSpec) -> Result<Self, ProcessError> {
        let program = spec.program.display().to_string();
        let spawned = cmd.spawn();
        // The command holds our copies of the pipe ends given to the child; until they are
        // closed a reader would never see the end of the output.
        drop(cmd);
        let mut child = spawned.map_err(|source| {
            let cwd_missing = spec.cwd.as_ref().is_some_and(|d| !d.is_dir());
            if source.kind() == std::io::ErrorKind::NotFound && !cwd_missing {
                ProcessError::NotFound { program }
            } else {
                ProcessError::Spawn { program, source }
            }
        })?;
        let started = Instant::now();
        let stdin = child.stdin.take().map(|mut pipe| {
            let input = spec.stdin.clone();
            thread::spawn(move || -> Option<String> {
                let result = pipe.write_all(input.as_bytes()).and_then(|()| pipe.flush());
                drop(pipe);
                result.err().map(|e| e.to_string())
            })
        });
        let (tx, rx) = mpsc::channel();
        Ok(Self {
            child,
            started,
            tx: Some(tx),
            rx,
            primary_open: true,
            readers: Vec::new(),
            stdin,
            finished: false,
        })
    }

    /// Reads `pipe` line by line (a line longer than `max_line` bytes comes in pieces) into
    /// `buf`, each line ending in `\n`, and hands every line to the watcher. This is the
    /// primary stream: the child counts as finished only once it is closed.
    pub(crate) fn read_lines(
        &mut self,
        pipe: impl Read + Send + 'static,
        buf: Arc<Mutex<Capped>>,
        max_line: usize,
    ) {
        let Some(tx) = self.tx.clone() else { return };
        self.readers.push(thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut bytes = Vec::new();
            loop {
                bytes.clear();
                match reader
                    .by_ref()
                    .take(max_line as u64)
                    .read_until(b'\n', &mut bytes)
                {
                    Ok(0) => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&bytes)
                            .trim_end_matches(['\n', '\r'])
                            .to_owned();
                        {
                            let mut kept = buf.lock().unwrap_or_else(PoisonError::into_inner);
                            kept.push(line.as_bytes());
                            kept.push(b"\n");
                        }
                        if tx.send(Event::Line(line)).is_err() {
                            return;
                        }
                    }
                }
            }
            let _ = tx.send(Event::PrimaryClosed);
        }));
    }

    /// Reads `pipe` in chunks into `buf`; each chunk counts as activity. With `primary`, the
    /// child counts as finished only once this pipe is closed.
    pub(crate) fn read_chunks(
        &mut self,
        mut pipe: impl Read + Send + 'static,
        buf: Arc<Mutex<Capped>>,
        primary: bool,
    ) {
        let Some(tx) = self.tx.clone() else { return };
        self.readers.push(thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                    Ok(n) => {
                        buf.lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(&chunk[..n]);
                        let _ = tx.send(Event::Activity);
                    }
                }
            }
            if primary {
                let _ = tx.send(Event::PrimaryClosed);
            }
        }));
    }

    /// There is no primary stream to wait for.
    pub(crate) fn primary_closed(&mut self) {
        self.primary_open = false;
    }

    /// Waits until the child exits (after closing the primary stream), a clock runs out or
    /// `cancelled` says so, calling `on_line` for each primary line. Kills nothing: that is
    /// [`finish`](Self::finish)'s job.
    pub(crate) fn watch(
        &mut self,
        spec: &ProcessSpec,
        cancelled: &dyn Fn() -> bool,
        on_line: &mut dyn FnMut(&str),
    ) -> std::io::Result<Ending> {
        // From here on a disconnected channel means every reader has stopped.
        self.tx.take();
        let mut last_activity = Instant::now();
        loop {
            if cancelled() {
                return Ok(Ending::Cancelled);
            }
            let now = Instant::now();
            if now.duration_since(self.started) > spec.total_timeout {
                return Ok(Ending::Timeout(Timeout::Total));
            }
            if now.duration_since(last_activity) > spec.idle_timeout {
                return Ok(Ending::Timeout(Timeout::Idle));
            }
            if self.primary_open {
                match self.rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(Event::Line(line)) => {
                        last_activity = Instant::now();
                        on_line(&line);
                    }
                    Ok(Event::Activity) => last_activity = Instant::now(),
                    Ok(Event::PrimaryClosed) | Err(RecvTimeoutError::Disconnected) => {
                        self.primary_open = false;
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        if exited(&mut self.child)? {
                            // The child is gone and what it wrote is in the pipe; a process it
                            // left (a daemon that called `setsid`) may hold the pipe open for
                            // ever. Reading ends once the pipe has been quiet for a moment.
                            self.drain(on_line);
                            return Ok(Ending::Exited);
                        }
                    }
                }
            } else {
                if exited(&mut self.child)? {
                    return Ok(Ending::Exited);
                }
                match self.rx.recv_timeout(Duration::from_millis(20)) {
                    Ok(_) => last_activity = Instant::now(),
                    Err(RecvTimeoutError::Disconnected) => thread::sleep(Duration::from_millis(20)),
                    Err(RecvTimeoutError::Timeout) => {}
                }
            }
        }
    }

    /// Takes what the readers still have after the child exited, until nothing has come for
    /// [`DRAIN_QUIET`] or the primary stream closes.
    fn drain(&mut self, on_line: &mut dyn FnMut(&str)) {
        // A descendant that keeps writing does not keep gavel reading either.
        let deadline = Instant::now() + DRAIN_QUIET * 10;
        loop {
            if Instant::now() >= deadline {
                self.primary_open = false;
                return;
            }
            match self.rx.recv_timeout(DRAIN_QUIET) {
                Ok(Event::Line(line)) => on_line(&line),
                Ok(Event::Activity) => {}
                Ok(Event::PrimaryClosed)
                | Err(RecvTimeoutError::Disconnected | RecvTimeoutError::Timeout) => {
                    self.primary_open = false;
                    return;
                }
            }
        }
    }

    /// Kills the process group (the child, or what it left behind), reaps the child, and gives
    /// the readers and the stdin writer a moment to finish.
    pub(crate) fn finish(&mut self) -> Finished {
        self.finished = true;
        let elapsed = self.started.elapsed();
        let kill_error = kill_group(&mut self.child);
        let status = self.child.wait();
        let deadline = Instant::now() + READER_GRACE;
        for reader in self.readers.drain(..) {
            join_within(reader, deadline);
        }
        let stdin_error = self
            .stdin
            .take()
            .and_then(|h| join_within(h, deadline))
            .flatten();
        Finished {
            status,
            stdin_error,
            kill_error,
            elapsed,
        }
    }
}

impl Drop for Supervised {
    /// A caller that unwinds (a panicking line callback) still leaves no process behind.
    fn drop(&mut self) {
        if !self.finished {
            let _ = kill_group(&mut self.child);
            let _ = self.child.wait();
        }
    }
}

/// Whether the child has exited, without reaping it.
fn exited(child: &mut Child) -> std::io::Result<bool> {
    if let Ok(pid) = i32::try_from(child.id()) {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match waitid(Id::Pid(Pid::from_raw(pid)), flags) {
            Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => return Ok(false),
            Ok(_) => return Ok(true),
            // Not waitable this way (already reaped): ask the standard library.
            Err(_) => {}
        }
    }
    Ok(child.try_wait()?.is_some())
}

/// SIGKILLs the child's process group. A group that no longer exists is fine; any other
/// failure is returned, after the child alone has been killed.
fn kill_group(child: &mut Child) -> Option<String> {
    let error = match i32::try_from(child.id()) {
        Ok(pgid) => match killpg(Pid::from_raw(pgid), Signal::SIGKILL) {
            Ok(()) | Err(Errno::ESRCH) => None,
            Err(e) => Some(e.to_string()),
        },
        Err(_) => Some(format!("process id {} is out of range", child.id())),
    };
    if error.is_some() {
        let _ = child.kill();
    }
    error
}

/// Joins `handle` if it finishes before `deadline`; otherwise leaves it running detached.
fn join_within<T>(handle: JoinHandle<T>, deadline: Instant) -> Option<T> {
    while !handle.is_finished() {
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(5));
    }
    handle.join().ok()
}
