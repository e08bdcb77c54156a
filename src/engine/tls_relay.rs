//! The administrative connections' way to a server whose TLS certificate is X.509 version 1
//! (MySQL 5.7's generated ones, the manuals' openssl recipe on OpenSSL 3). mysql_async's
//! rustls verifier cannot read such a certificate in any mode, and mysql_async takes no
//! verifier of ours. So they connect in the clear to a relay of this process on 127.0.0.1,
//! which does the MySQL TLS upgrade towards the server with the workload client's TLS
//! (`wire::tls`, which takes version 1 as the mysql client does: REQUIRED encrypted and
//! unverified with the handshake's signature checked, VERIFY_CA with the chain checked) and
//! then relays bytes. Between mysql_async and the relay nothing leaves the process but
//! loopback; the server sees a TLS connection, as with any other client.
//!
//! The upgrade: the server's greeting goes to the client as it is; the client's handshake
//! response (sequence 1) is preceded towards the server by an SSLRequest (its first 32 bytes
//! with CLIENT_SSL set), so every later packet of the login is one sequence number further
//! on the server's side than on the client's. The relay shifts them until the server's OK
//! or ERR ends the login; commands start again at 0 on both sides. A TLS failure reaches
//! the client as the server's answer to its login: error 2026 with rustls's reason.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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

/// The local address of the relay to `up` (one per server and TLS setting, started on first
/// use and kept for the life of the process).
pub fn address(key: &str, up: &Upstream) -> std::io::Result<SocketAddr> {
    static RELAYS: Mutex<Option<HashMap<String, SocketAddr>>> = Mutex::new(None);
    let mut relays = RELAYS.lock().unwrap_or_else(|p| p.into_inner());
    let relays = relays.get_or_insert_with(HashMap::new);
    if let Some(a) = relays.get(key) {
        return Ok(*a);
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let rt = runtime();
    let listener = {
        let _in = rt.enter();
        TcpListener::from_std(listener)?
    };
    let up = up.clone();
    rt.spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let up = up.clone();
            tokio::spawn(async move {
                let _ = relay(client, &up).await;
            });
        }
    });
    relays.insert(key.to_string(), addr);
    Ok(addr)
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
async fn relay(mut client: TcpStream, up: &Upstream) -> std::io::Result<()> {
    let _ = client.set_nodelay(true);
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
