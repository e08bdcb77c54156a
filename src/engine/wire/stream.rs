//! The socket a connection talks over — TCP or a Unix socket, shared so another thread can
//! shut it down to end a hung query — how it is opened, and the TCP socket under a TLS
//! session, whose writes never raise SIGPIPE.

use super::error::*;
use super::Endpoint;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// A connected socket. Shared so another thread can shut it down to end a hung query.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    /// Ends any read or write in progress on this socket with an error.
    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }

    pub(super) fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
        }
    }
}

impl Read for &Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).read(buf),
            Stream::Unix(s) => (&*s).read(buf),
        }
    }
}

impl Write for &Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).write(buf),
            Stream::Unix(s) => (&*s).write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub(super) fn open(ep: &Endpoint, timeout: Duration) -> Result<Stream, Error> {
    match ep {
        Endpoint::Socket(path) => UnixStream::connect(path).map(Stream::Unix).map_err(|e| {
            Error::client(
                CR_CONNECTION_ERROR,
                format!("Can't connect to local MySQL server through socket '{path}' ({e})"),
            )
        }),
        Endpoint::Tcp(host, port) => {
            let fail = |e: std::io::Error| {
                Error::client(
                    CR_CONN_HOST_ERROR,
                    format!("Can't connect to MySQL server on '{host}:{port}' ({e})"),
                )
            };
            let mut last = None;
            for addr in (host.as_str(), *port).to_socket_addrs().map_err(fail)? {
                match TcpStream::connect_timeout(&addr, timeout) {
                    Ok(s) => {
                        let _ = s.set_nodelay(true);
                        return Ok(Stream::Tcp(s));
                    }
                    Err(e) => last = Some(e),
                }
            }
            Err(fail(last.unwrap_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotFound, "no address")
            })))
        }
    }
}

/// The TCP socket under a TLS session. rustls writes its records with `write_vectored`,
/// which std sends with `writev`: a peer that went away then raises SIGPIPE, and the
/// process (SIGPIPE at its default, so `bench | head` ends quietly) died without a word.
/// Every write here is a `send`/`sendmsg` with MSG_NOSIGNAL, so a closed peer is an EPIPE
/// error like any other lost connection.
#[derive(Debug)]
pub struct TlsSocket(pub TcpStream);

impl Read for TlsSocket {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        (&self.0).read(buf)
    }
}

impl Write for TlsSocket {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // std's TcpStream::write is a send with MSG_NOSIGNAL on Linux.
        (&self.0).write(buf)
    }

    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        // SAFETY: msghdr is plain data; zeroed is its empty value. IoSlice is guaranteed
        // ABI-compatible with iovec on Unix, and sendmsg only reads the buffers.
        let n = unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
            msg.msg_iovlen = bufs.len().min(1024) as _;
            libc::sendmsg(self.0.as_raw_fd(), &msg, libc::MSG_NOSIGNAL)
        };
        if n < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
