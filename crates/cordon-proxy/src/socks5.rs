//! A small SOCKS5 parser (RFC 1928; no authentication, `CONNECT` only is served), fuzzed
//! (`fuzz/fuzz_targets/socks5.rs`) and property-tested. Pure: byte slices in, values out.
//!
//! Each parser returns `Ok(None)` while the buffer holds an incomplete message, `Ok(Some((value,
//! consumed)))` once it holds a whole one, and an error for a message that can never become
//! valid.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The protocol version byte.
pub const VERSION: u8 = 5;
/// "No authentication required".
pub const METHOD_NO_AUTH: u8 = 0x00;
/// "No acceptable methods".
pub const METHOD_NONE: u8 = 0xff;

/// Reply codes (RFC 1928 §6).
pub mod reply {
    /// Succeeded.
    pub const SUCCEEDED: u8 = 0x00;
    /// General SOCKS server failure.
    pub const GENERAL_FAILURE: u8 = 0x01;
    /// Connection not allowed by ruleset.
    pub const NOT_ALLOWED: u8 = 0x02;
    /// Host unreachable.
    pub const HOST_UNREACHABLE: u8 = 0x04;
    /// Connection refused.
    pub const CONNECTION_REFUSED: u8 = 0x05;
    /// Command not supported.
    pub const COMMAND_NOT_SUPPORTED: u8 = 0x07;
    /// Address type not supported.
    pub const ADDRESS_TYPE_NOT_SUPPORTED: u8 = 0x08;
}

/// A malformed message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Socks5Error {
    /// The version byte is not 5.
    #[error("not SOCKS5 (version byte {0:#04x})")]
    Version(u8),
    /// The greeting offers no method.
    #[error("the greeting offers no authentication method")]
    NoMethods,
    /// The reserved byte of a request is not zero.
    #[error("reserved byte is {0:#04x}, not 0")]
    Reserved(u8),
    /// Unknown address type.
    #[error("address type {0:#04x} is not supported")]
    AddressType(u8),
    /// A domain of length 0 or not UTF-8.
    #[error("the domain name is empty or not UTF-8")]
    Domain,
}

/// The command of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `CONNECT` (1).
    Connect,
    /// `BIND` (2).
    Bind,
    /// `UDP ASSOCIATE` (3).
    UdpAssociate,
    /// Anything else.
    Other(u8),
}

impl Command {
    fn from_byte(b: u8) -> Command {
        match b {
            1 => Command::Connect,
            2 => Command::Bind,
            3 => Command::UdpAssociate,
            o => Command::Other(o),
        }
    }

    fn to_byte(self) -> u8 {
        match self {
            Command::Connect => 1,
            Command::Bind => 2,
            Command::UdpAssociate => 3,
            Command::Other(o) => o,
        }
    }
}

/// The destination of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// An address (ATYP 1 or 4).
    Ip(IpAddr),
    /// A name resolved by the proxy (ATYP 3: `socks5h`), 1..=255 bytes of UTF-8.
    Domain(String),
}

/// A request (`VER CMD RSV ATYP DST.ADDR DST.PORT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The command.
    pub command: Command,
    /// The destination host.
    pub host: Host,
    /// The destination port.
    pub port: u16,
}

/// Parses the client greeting (`VER NMETHODS METHODS…`): the offered methods.
///
/// Errors: version not 5, or no method offered.
pub fn parse_greeting(b: &[u8]) -> Result<Option<(Vec<u8>, usize)>, Socks5Error> {
    let Some(&v) = b.first() else {
        return Ok(None);
    };
    if v != VERSION {
        return Err(Socks5Error::Version(v));
    }
    let Some(&n) = b.get(1) else {
        return Ok(None);
    };
    if n == 0 {
        return Err(Socks5Error::NoMethods);
    }
    let end = 2 + n as usize;
    if b.len() < end {
        return Ok(None);
    }
    Ok(Some((b[2..end].to_vec(), end)))
}

/// Parses a request.
///
/// Errors: version not 5, reserved byte not 0, unknown address type, empty or non-UTF-8
/// domain.
pub fn parse_request(b: &[u8]) -> Result<Option<(Request, usize)>, Socks5Error> {
    if b.len() < 4 {
        if let Some(&v) = b.first() {
            if v != VERSION {
                return Err(Socks5Error::Version(v));
            }
        }
        if let Some(&r) = b.get(2) {
            if r != 0 {
                return Err(Socks5Error::Reserved(r));
            }
        }
        return Ok(None);
    }
    if b[0] != VERSION {
        return Err(Socks5Error::Version(b[0]));
    }
    if b[2] != 0 {
        return Err(Socks5Error::Reserved(b[2]));
    }
    let command = Command::from_byte(b[1]);
    let (host, at) = match b[3] {
        1 => {
            if b.len() < 4 + 4 {
                return Ok(None);
            }
            let a: [u8; 4] = b[4..8].try_into().expect("length checked");
            (Host::Ip(IpAddr::V4(Ipv4Addr::from(a))), 8)
        }
        4 => {
            if b.len() < 4 + 16 {
                return Ok(None);
            }
            let a: [u8; 16] = b[4..20].try_into().expect("length checked");
            (Host::Ip(IpAddr::V6(Ipv6Addr::from(a))), 20)
        }
        3 => {
            let Some(&n) = b.get(4) else {
                return Ok(None);
            };
            if n == 0 {
                return Err(Socks5Error::Domain);
            }
            let end = 5 + n as usize;
            if b.len() < end {
                return Ok(None);
            }
            let d = std::str::from_utf8(&b[5..end]).map_err(|_| Socks5Error::Domain)?;
            (Host::Domain(d.to_string()), end)
        }
        t => return Err(Socks5Error::AddressType(t)),
    };
    if b.len() < at + 2 {
        return Ok(None);
    }
    let port = u16::from_be_bytes([b[at], b[at + 1]]);
    Ok(Some((
        Request {
            command,
            host,
            port,
        },
        at + 2,
    )))
}

/// Encodes a request (the client side; used by tests, the fuzz target and the bench).
///
/// Panics: a domain longer than 255 bytes.
pub fn encode_request(r: &Request) -> Vec<u8> {
    let mut out = vec![VERSION, r.command.to_byte(), 0];
    match &r.host {
        Host::Ip(IpAddr::V4(a)) => {
            out.push(1);
            out.extend_from_slice(&a.octets());
        }
        Host::Ip(IpAddr::V6(a)) => {
            out.push(4);
            out.extend_from_slice(&a.octets());
        }
        Host::Domain(d) => {
            assert!(!d.is_empty() && d.len() <= 255, "domain length 1..=255");
            out.push(3);
            out.push(d.len() as u8);
            out.extend_from_slice(d.as_bytes());
        }
    }
    out.extend_from_slice(&r.port.to_be_bytes());
    out
}

/// A reply (`VER REP RSV ATYP BND.ADDR BND.PORT`); `bound` defaults to `0.0.0.0:0`.
pub fn encode_reply(code: u8, bound: Option<SocketAddr>) -> Vec<u8> {
    let b = bound.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)));
    let mut out = vec![VERSION, code, 0];
    match b.ip() {
        IpAddr::V4(a) => {
            out.push(1);
            out.extend_from_slice(&a.octets());
        }
        IpAddr::V6(a) => {
            out.push(4);
            out.extend_from_slice(&a.octets());
        }
    }
    out.extend_from_slice(&b.port().to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greeting_and_request() {
        assert_eq!(parse_greeting(&[5]), Ok(None));
        assert_eq!(parse_greeting(&[5, 2, 0]), Ok(None));
        assert_eq!(parse_greeting(&[5, 2, 0, 2, 9]), Ok(Some((vec![0, 2], 4))));
        assert_eq!(parse_greeting(&[4, 1, 0]), Err(Socks5Error::Version(4)));
        assert_eq!(parse_greeting(&[5, 0]), Err(Socks5Error::NoMethods));
        let r = Request {
            command: Command::Connect,
            host: Host::Domain("example.com".into()),
            port: 443,
        };
        let b = encode_request(&r);
        assert_eq!(parse_request(&b), Ok(Some((r, b.len()))));
        assert_eq!(parse_request(&b[..b.len() - 1]), Ok(None));
        assert_eq!(
            parse_request(&[5, 1, 0, 9, 0, 0]),
            Err(Socks5Error::AddressType(9))
        );
        assert_eq!(parse_request(&[5, 1, 0, 3, 0]), Err(Socks5Error::Domain));
        assert_eq!(parse_request(&[5, 1, 1]), Err(Socks5Error::Reserved(1)));
        let reply = encode_reply(reply::SUCCEEDED, Some("[::1]:80".parse().unwrap()));
        assert_eq!(reply.len(), 4 + 16 + 2);
    }
}
