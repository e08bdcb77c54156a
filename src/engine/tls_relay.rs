//! The administrative connections' way to a server whose TLS certificate is X.509 version 1
//! (MySQL 5.7's generated ones, the manuals' openssl recipe on OpenSSL 3). mysql_async's
//! rustls verifier cannot read such a certificate in any mode, and mysql_async takes no
//! verifier of ours. So they connect in the clear to a relay of this process, which does the
//! MySQL TLS upgrade towards the server with the workload client's TLS (`wire::tls`, which
//! takes version 1 as the mysql client does: REQUIRED encrypted and unverified with the
//! handshake's signature checked, VERIFY_CA with the chain checked) and then relays bytes.
//! The server sees a TLS connection, as with any other client.
//!
//! The relay logs in with the target's client certificate, so it must serve this process
//! alone: it listens on a Unix socket in a directory of its own (mode 0700, under TMPDIR,
//! removed at exit and reaped after a kill like the run's work directories), and accepts a
//! connection only when the kernel says (SO_PEERCRED) that its peer is this very process.
//! Anything else is closed before a byte reaches the server.
//!
//! The upgrade: the server's greeting goes to the client as it is; the client's handshake
//! response (sequence 1) is preceded towards the server by an SSLRequest (its first 32 bytes
//! with CLIENT_SSL set), so every later packet of the login is one sequence number further
//! on the server's side than on the client's. The relay shifts them until the server's OK
//! or ERR ends the login; commands start again at 0 on both sides. A TLS failure reaches
//! the client as the server's answer to its login: error 2026 with rustls's reason.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

const CLIENT_SSL: u32 = 0x800;
/// A login packet larger than this is no login (the relay reads it whole).
const MAX_LOGIN_PACKET: usize = 1 << 20;
/// How long connecting to the server and its TLS handshake may take.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// Where a relay sends its connections, with the TLS it uses towards the server.
#[derive(Clone)]
pub struct Upstream {
    pub host: String,
    pub port: u16,
    pub tls: Arc<rustls::ClientConfig>,
}

/// The relays' runtime: a thread of its own, so a relay outlives the runtime of the command
/// that asked for it (commands build and drop runtimes of their own).
fn runtime() -> &'static tokio::runtime::Handle {
    static RT: OnceLock<tokio::runtime::Handle> = OnceLock::new();
    RT.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime for the TLS relays");
        let handle = rt.handle().clone();
        std::thread::Builder::new()
            .name("sweepbench-tls-relay".into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .expect("the TLS relays' thread");
        handle
    })
}

/// The relays' directory: made once per process, removed at its exit.
static DIR: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn remove_dir() {
    if let Some(d) = DIR.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The relays of this process: their directory's mark, and the socket of each upstream.
struct Relays {
    dir: PathBuf,
    _owner: crate::owner::Owner,
    sockets: HashMap<String, PathBuf>,
}

fn directory() -> std::io::Result<Relays> {
    let dir = tempfile::Builder::new()
        .prefix("sweepbench-relay-")
        .tempdir()?
        .keep();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    let owner = crate::owner::mark(&dir)?;
    if DIR.set(dir.clone()).is_ok() {
        // SAFETY: registers a handler without arguments that only removes a directory.
        unsafe { libc::atexit(remove_dir) };
    }
    Ok(Relays {
        dir,
        _owner: owner,
        sockets: HashMap::new(),
    })
}

/// Whether the kernel says `s` was connected by this process (its uid and its pid).
fn from_this_process(s: &UnixStream) -> bool {
    // SAFETY: geteuid and getpid have no preconditions.
    let (uid, pid) = unsafe { (libc::geteuid(), libc::getpid()) };
    s.peer_cred()
        .is_ok_and(|c| c.uid() == uid && c.pid() == Some(pid))
}

/// The socket of the relay to `up` (one per server and TLS setting, started on first use
/// and kept for the life of the process).
pub fn address(key: &str, up: &Upstream) -> std::io::Result<PathBuf> {
    static RELAYS: Mutex<Option<Relays>> = Mutex::new(None);
    let mut relays = RELAYS.lock().unwrap_or_else(|p| p.into_inner());
    if relays.is_none() {
        *relays = Some(directory()?);
    }
    let relays = relays.as_mut().expect("made above");
    if let Some(a) = relays.sockets.get(key) {
        return Ok(a.clone());
    }
    let path = relays.dir.join(format!("{}.sock", relays.sockets.len()));
    let listener = std::os::unix::net::UnixListener::bind(&path)?;
    listener.set_nonblocking(true)?;
    let rt = runtime();
    let listener = {
        let _in = rt.enter();
        UnixListener::from_std(listener)?
    };
    let up = up.clone();
    rt.spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            if !from_this_process(&client) {
                continue;
            }
            let up = up.clone();
            tokio::spawn(async move {
                let _ = relay(client, &up).await;
            });
        }
    });
    relays.sockets.insert(key.to_string(), path.clone());
    Ok(path)
}

async fn read_packet<R: AsyncRead + Unpin>(r: &mut R) -> std::io::Result<(u8, Vec<u8>)> {
    let mut head = [0u8; 4];
    r.read_exact(&mut head).await?;
    Ok((head[3], read_payload(r, head).await?))
}

/// The payload of a login packet whose header is `head`.
async fn read_payload<R: AsyncRead + Unpin>(r: &mut R, head: [u8; 4]) -> std::io::Result<Vec<u8>> {
    let len = u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize;
    if len > MAX_LOGIN_PACKET {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "a login packet larger than 1 MiB",
        ));
    }
    let mut payload = vec![0u8; len];
    r.read_exact(&mut payload).await?;
    Ok(payload)
}

async fn write_packet<W: AsyncWrite + Unpin>(
    w: &mut W,
    seq: u8,
    payload: &[u8],
) -> std::io::Result<()> {
    let len = (payload.len() as u32).to_le_bytes();
    let mut buf = Vec::with_capacity(4 + payload.len());
    buf.extend_from_slice(&[len[0], len[1], len[2], seq]);
    buf.extend_from_slice(payload);
    w.write_all(&buf).await?;
    w.flush().await
}

/// An ERR packet with libmysqlclient's code for a TLS failure.
fn tls_error(why: &str) -> Vec<u8> {
    let mut p = vec![0xff];
    p.extend_from_slice(&2026u16.to_le_bytes());
    p.extend_from_slice(b"#HY000");
    p.extend_from_slice(format!("SSL connection error: {why}").as_bytes());
    p
}

/// One administrative connection: the upgrade, the login with shifted sequence numbers,
/// then bytes both ways until either side closes.
async fn relay(mut client: UnixStream, up: &Upstream) -> std::io::Result<()> {
    let connect = TcpStream::connect((up.host.as_str(), up.port));
    let mut server = tokio::time::timeout(DEADLINE, connect).await??;
    let _ = server.set_nodelay(true);
    let (seq, greeting) = tokio::time::timeout(DEADLINE, read_packet(&mut server)).await??;
    write_packet(&mut client, seq, &greeting).await?;
    let (_, mut login) = read_packet(&mut client).await?;
    if login.len() < 32 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "a handshake response shorter than an SSLRequest",
        ));
    }
    let caps = u32::from_le_bytes([login[0], login[1], login[2], login[3]]) | CLIENT_SSL;
    login[..4].copy_from_slice(&caps.to_le_bytes());
    write_packet(&mut server, 1, &login[..32]).await?;
    let name = match rustls::pki_types::ServerName::try_from(up.host.clone()) {
        Ok(n) => n,
        Err(e) => {
            let why = format!("'{}' is not a host name TLS can check ({e})", up.host);
            return write_packet(&mut client, 2, &tls_error(&why)).await;
        }
    };
    let handshake = tokio_rustls::TlsConnector::from(up.tls.clone()).connect(name, server);
    let mut tls = match tokio::time::timeout(DEADLINE, handshake).await {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            let why = crate::engine::wire::tls::explain(&e.to_string());
            return write_packet(&mut client, 2, &tls_error(&why)).await;
        }
        Err(_) => {
            let why = format!("no TLS handshake within {} s", DEADLINE.as_secs());
            return write_packet(&mut client, 2, &tls_error(&why)).await;
        }
    };
    write_packet(&mut tls, 2, &login).await?;
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = tokio::io::split(tls);
    let logged_in = AtomicBool::new(false);
    let down = async {
        loop {
            let (seq, p) = read_packet(&mut sr).await?;
            let last = matches!(p.first(), Some(0x00 | 0xff));
            if last {
                // Before the client can answer it: its next packet is a command.
                logged_in.store(true, Ordering::SeqCst);
            }
            write_packet(&mut cw, seq.wrapping_sub(1), &p).await?;
            if last {
                break;
            }
        }
        tokio::io::copy(&mut sr, &mut cw).await.map(|_| ())
    };
    let upward = async {
        loop {
            let mut head = [0u8; 4];
            cr.read_exact(&mut head).await?;
            if logged_in.load(Ordering::SeqCst) {
                // A command, of any size: its header as it is, the rest as bytes.
                sw.write_all(&head).await?;
                break;
            }
            let p = read_payload(&mut cr, head).await?;
            write_packet(&mut sw, head[3].wrapping_add(1), &p).await?;
        }
        tokio::io::copy(&mut cr, &mut sw).await.map(|_| ())
    };
    // Either side closing ends the connection.
    tokio::select! {
        r = down => r,
        r = upward => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::sync::atomic::AtomicUsize;

    /// A server that counts the connections it is given and greets each with one packet.
    fn counting_server() -> (u16, Arc<AtomicUsize>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let seen = Arc::new(AtomicUsize::new(0));
        let counted = seen.clone();
        std::thread::spawn(move || {
            for mut s in l.incoming().flatten() {
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = s.write_all(&[5, 0, 0, 0, b'h', b'e', b'l', b'l', b'o']);
                std::thread::spawn(move || {
                    let _ = s.read(&mut [0u8; 64]);
                });
            }
        });
        (port, seen)
    }

    fn relay_to(port: u16) -> PathBuf {
        let tls = crate::engine::wire::tls::client_config(
            crate::engine::wire::tls::Verify::Nothing,
            &Default::default(),
        )
        .unwrap();
        let up = Upstream {
            host: "127.0.0.1".into(),
            port,
            tls,
        };
        address(&format!("test {port}"), &up).unwrap()
    }

    /// What another process connecting to `sock` as `uid` (None: ours) reads before the
    /// relay closes, or why it could not connect.
    fn other_process(sock: &std::path::Path, uid: Option<u32>) -> String {
        let mut cmd = std::process::Command::new("python3");
        cmd.args([
            "-c",
            "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1])\nexcept OSError as e:\n print('refused', e.errno); sys.exit()\ns.settimeout(5)\nprint('read', len(s.recv(64)))",
        ])
        .arg(sock);
        if let Some(u) = uid {
            std::os::unix::process::CommandExt::uid(&mut cmd, u);
        }
        let out = cmd.output().expect("python3");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The relay logs in with the target's client certificate, so only this process may use
    /// it: its directory is closed to other users, and a connection from another process
    /// (even of the same user) is closed unanswered without the server seeing anything. A
    /// connection of this process reaches the server and gets its greeting.
    #[test]
    fn only_this_process_reaches_the_server_through_the_relay() {
        let (port, seen) = counting_server();
        let sock = relay_to(port);
        let dir = sock.parent().unwrap();
        let meta = std::fs::metadata(dir).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o700, "{dir:?}");
        assert!(dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("sweepbench-relay-"));
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            // nobody: the directory's mode stops it before the relay.
            assert_eq!(other_process(&sock, Some(65534)), "refused 13");
        }
        // Another process of this user passes the directory; the relay closes on it.
        assert_eq!(other_process(&sock, None), "read 0");
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(seen.load(Ordering::SeqCst), 0, "the server saw a login");
        // This process is served: the server's greeting arrives through the relay.
        let mut ours = std::os::unix::net::UnixStream::connect(&sock).unwrap();
        ours.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut greeting = [0u8; 9];
        ours.read_exact(&mut greeting).unwrap();
        assert_eq!(&greeting[4..], b"hello");
        assert_eq!(seen.load(Ordering::SeqCst), 1);
    }
}
