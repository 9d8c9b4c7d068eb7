//! Host rules of the network allow and deny lists (issue 10 §4), shared by profile loading
//! (a bad pattern is a load error) and the proxy (`cordon-proxy`). Pure: no OS calls, no
//! DNS.
//!
//! Spellings:
//! - `example.com` — that host only;
//! - `*.example.com` — its subdomains only (`a.example.com`, `a.b.example.com`), not the
//!   apex;
//! - `**.example.com` — the apex and its subdomains;
//! - `10.1.2.3`, `::1`, `[::1]`, `127.0.0.0/8`, `fd00::/8` — addresses and networks (the
//!   only way to allow a loopback, private or link-local address: see [`is_internal`]);
//! - any of these with `:PORT` (`example.com:443`, `[::1]:8080`) — that port only.
//!
//! A bare `*` (or `**`) is refused: it would allow every host (use `network = "enabled"`).
//! Names are normalised before matching — case, a trailing dot, IDNA (`bücher.de` →
//! `xn--bcher-kva.de`) — on both sides.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What a rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// One normalised name.
    Exact(String),
    /// Strict subdomains of the normalised name (`*.name`).
    Subdomains(String),
    /// The name and its subdomains (`**.name`).
    ApexAndSubdomains(String),
    /// An address, or a network (`addr/prefix`).
    Net(IpAddr, u8),
}

/// One allow or deny entry: a pattern, an optional port, and the spelling (for messages,
/// the 403 and the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRule {
    /// What it matches.
    pub pattern: HostPattern,
    /// Only this port, when given.
    pub port: Option<u16>,
    /// The entry as written.
    pub text: String,
}

/// A destination as a client named it, normalised.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// A host name (lower case, ASCII/punycode, no trailing dot).
    Name(String),
    /// An address literal.
    Ip(IpAddr),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Name(n) => f.write_str(n),
            Target::Ip(IpAddr::V6(a)) => write!(f, "[{a}]"),
            Target::Ip(a) => write!(f, "{a}"),
        }
    }
}

/// Normalises a host name: trailing dot dropped, IDNA to ASCII (which lower-cases), and
/// checked (letters, digits, `-`, `_`, labels of 1..=63 bytes, at most 253 bytes).
///
/// Errors: empty, not a valid name after IDNA, or containing characters a name cannot.
pub fn normalize_name(name: &str) -> Result<String, String> {
    let n = name.strip_suffix('.').unwrap_or(name);
    if n.is_empty() {
        return Err(format!("{name:?} is not a host name"));
    }
    let ascii = idna::domain_to_ascii(n).map_err(|_| format!("{name:?} is not a host name"))?;
    if ascii.is_empty() || ascii.len() > 253 {
        return Err(format!("{name:?} is not a host name"));
    }
    for label in ascii.split('.') {
        if label.is_empty()
            || label.len() > 63
            || !label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(format!("{name:?} is not a host name"));
        }
    }
    Ok(ascii)
}

/// Parses a host as a client names it (an HTTP authority's host, a CONNECT target's, a
/// SOCKS5 domain): an address literal (`[::1]` or `::1`, `127.0.0.1`) or a name.
///
/// Errors: see [`normalize_name`].
pub fn parse_target(host: &str) -> Result<Target, String> {
    let h = host.trim();
    let inner = h
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(h);
    if let Ok(ip) = inner.parse::<IpAddr>() {
        return Ok(Target::Ip(ip));
    }
    if inner != h {
        return Err(format!("{host:?} is not an address"));
    }
    Ok(Target::Name(normalize_name(h)?))
}

/// Splits `host:port` / `[v6]:port` / `host` (no port) / bare IPv6.
fn split_port(s: &str) -> Result<(&str, Option<u16>), String> {
    let bad_port = || format!("{s:?}: the port must be a number from 1 to 65535");
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("{s:?}: missing `]`"))?;
        return match after {
            "" => Ok((host, None)),
            p => {
                let p = p.strip_prefix(':').ok_or_else(bad_port)?;
                let n: u16 = p.parse().map_err(|_| bad_port())?;
                if n == 0 {
                    return Err(bad_port());
                }
                Ok((host, Some(n)))
            }
        };
    }
    // More than one colon: a bare IPv6 address (or network), no port.
    if s.matches(':').count() > 1 {
        return Ok((s, None));
    }
    match s.rsplit_once(':') {
        Some((h, p)) => {
            let n: u16 = p.parse().map_err(|_| bad_port())?;
            if n == 0 {
                return Err(bad_port());
            }
            Ok((h, Some(n)))
        }
        None => Ok((s, None)),
    }
}

impl HostRule {
    /// Parses one allow/deny entry (see the module docs).
    ///
    /// Errors: empty, a bare `*`/`**`, a `*` anywhere but a leading `*.`/`**.`, a bad
    /// port, network or name — each message says what to write instead.
    pub fn parse(text: &str) -> Result<HostRule, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("an empty host pattern".into());
        }
        let (host, port) = split_port(t)?;
        if host == "*" || host == "**" {
            return Err(format!(
                "{text:?} would match every host; list the hosts (`*.example.com` for \
                 subdomains, `**.example.com` for the apex too), or set network = \
                 \"enabled\""
            ));
        }
        let pattern = if let Some((addr, prefix)) = host.split_once('/') {
            let ip: IpAddr = addr
                .parse()
                .map_err(|_| format!("{text:?}: {addr:?} is not an address"))?;
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let p: u8 = prefix
                .parse()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("{text:?}: the prefix must be 0..={max}"))?;
            HostPattern::Net(ip, p)
        } else if let Ok(ip) = host.parse::<IpAddr>() {
            HostPattern::Net(ip, if ip.is_ipv4() { 32 } else { 128 })
        } else if let Some(rest) = host.strip_prefix("**.") {
            HostPattern::ApexAndSubdomains(name_part(text, rest)?)
        } else if let Some(rest) = host.strip_prefix("*.") {
            HostPattern::Subdomains(name_part(text, rest)?)
        } else {
            HostPattern::Exact(name_part(text, host)?)
        };
        Ok(HostRule {
            pattern,
            port,
            text: t.to_string(),
        })
    }

    /// Whether the rule matches `target` on `port`. Name patterns never match an address
    /// literal and vice versa (use [`HostRule::matches_addr`] for resolved addresses).
    pub fn matches(&self, target: &Target, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match (target, &self.pattern) {
            (Target::Name(n), HostPattern::Exact(e)) => n == e,
            (Target::Name(n), HostPattern::Subdomains(d)) => is_strict_subdomain(n, d),
            (Target::Name(n), HostPattern::ApexAndSubdomains(d)) => {
                n == d || is_strict_subdomain(n, d)
            }
            (Target::Ip(ip), HostPattern::Net(..)) => self.matches_addr(*ip, port),
            _ => false,
        }
    }

    /// Whether the rule is an address/network rule covering `ip` on `port`.
    pub fn matches_addr(&self, ip: IpAddr, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        let HostPattern::Net(net, prefix) = self.pattern else {
            return false;
        };
        in_net(canonical_ip(ip), canonical_ip(net), prefix)
    }
}

fn name_part(text: &str, s: &str) -> Result<String, String> {
    if s.contains('*') {
        return Err(format!(
            "{text:?}: `*` may only lead a pattern, as `*.example.com` or `**.example.com`"
        ));
    }
    normalize_name(s).map_err(|e| format!("{text:?}: {e}"))
}

fn is_strict_subdomain(n: &str, d: &str) -> bool {
    n.len() > d.len() + 1 && n.ends_with(d) && n.as_bytes()[n.len() - d.len() - 1] == b'.'
}

/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 address it is.
pub fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - prefix.min(32))
            };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - prefix.min(128))
            };
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// The IPv4 address an IPv6 address carries, for the forms that route to (or stand for) an
/// IPv4 destination: IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, SIIT
/// IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765), the NAT64 well-known prefix
/// `64:ff9b::a.b.c.d` (RFC 6052), 6to4 `2002:AABB:CCDD::/48` (RFC 3056) and Teredo
/// `2001:0::/32`, whose client address is the last 32 bits inverted (RFC 4380). `None` for
/// any other address. A NAT64 gateway on an operator's own prefix cannot be recognised
/// from the address alone.
pub fn embedded_ipv4(a: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = a.segments();
    // The low 32 bits.
    let tail = Ipv4Addr::from(u128::from(a) as u32);
    if s[0..5] == [0, 0, 0, 0, 0] && (s[5] == 0 || s[5] == 0xffff) {
        // ::a.b.c.d and ::ffff:a.b.c.d
        return Some(tail);
    }
    if s[0..4] == [0, 0, 0, 0] && s[4] == 0xffff && s[5] == 0 {
        return Some(tail);
    }
    if s[0..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2])));
    }
    if s[0] == 0x2001 && s[1] == 0 {
        return Some(Ipv4Addr::from(!u32::from(tail)));
    }
    None
}

/// Whether `ip` is an internal address — loopback, private (RFC 1918, IPv6 unique local),
/// link-local, carrier-grade NAT, unspecified, broadcast, multicast, reserved (`240/4`,
/// IETF `192.0.0.0/24`, benchmarking `198.18.0.0/15`), or the IPv4 "this network" block —
/// which the proxy refuses unless an address rule allows it explicitly (DNS rebinding
/// protection; checked on the address actually connected to). An IPv6 address that
/// carries an IPv4 one ([`embedded_ipv4`]: NAT64, 6to4, Teredo, SIIT, mapped) is judged by
/// the address it carries; the local-use NAT64 block `64:ff9b:1::/48` (RFC 8215), where
/// the embedding depends on the operator's prefix length, is internal as a whole (breaker,
/// stop 22: `64:ff9b::7f00:1`, NAT64 of 127.0.0.1, was allowed).
pub fn is_internal(ip: IpAddr) -> bool {
    match canonical_ip(ip) {
        IpAddr::V4(a) => {
            let o = a.octets();
            a.is_loopback()
                || a.is_private()
                || a.is_link_local()
                || a.is_unspecified()
                || a.is_broadcast()
                || a.is_multicast()
                || o[0] == 0
                || o[0] >= 240
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || (o[0] == 198 && (o[1] & 0xfe) == 18)
        }
        IpAddr::V6(a) => {
            let s = a.segments();
            a.is_loopback()
                || a.is_unspecified()
                || a.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64
                || embedded_ipv4(a).is_some_and(|v4| is_internal(IpAddr::V4(v4)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Target {
        parse_target(s).unwrap()
    }

    #[test]
    fn wildcard_forms() {
        let sub = HostRule::parse("*.example.com").unwrap();
        assert!(sub.matches(&name("a.example.com"), 443));
        assert!(sub.matches(&name("a.b.example.com"), 80));
        assert!(!sub.matches(&name("example.com"), 443));
        assert!(!sub.matches(&name("badexample.com"), 443));
        let apex = HostRule::parse("**.example.com").unwrap();
        assert!(apex.matches(&name("example.com"), 443));
        assert!(apex.matches(&name("x.example.com"), 443));
        assert!(!apex.matches(&name("example.com.evil.net"), 443));
        for bad in [
            "*",
            "**",
            " * ",
            "*:443",
            "foo.*.com",
            "*example.com",
            "",
            "a..b",
        ] {
            assert!(HostRule::parse(bad).is_err(), "{bad:?}");
        }
        assert!(HostRule::parse("*")
            .unwrap_err()
            .contains("would match every host"));
    }

    #[test]
    fn normalisation_case_trailing_dot_idna_ports() {
        let r = HostRule::parse("Bücher.Example.").unwrap();
        assert_eq!(
            r.pattern,
            HostPattern::Exact("xn--bcher-kva.example".into())
        );
        assert!(r.matches(&name("BÜCHER.example"), 443));
        assert!(r.matches(&name("xn--bcher-kva.example."), 80));
        let p = HostRule::parse("example.com:443").unwrap();
        assert!(p.matches(&name("EXAMPLE.com"), 443));
        assert!(!p.matches(&name("example.com"), 80));
        let v6 = HostRule::parse("[::1]:8080").unwrap();
        assert!(v6.matches(&Target::Ip("::1".parse().unwrap()), 8080));
        assert!(!v6.matches(&Target::Ip("::1".parse().unwrap()), 80));
        assert!(HostRule::parse("example.com:0").is_err());
        assert!(HostRule::parse("example.com:http").is_err());
        assert_eq!(
            parse_target("[::1]").unwrap(),
            Target::Ip("::1".parse().unwrap())
        );
        assert!(parse_target("exa mple.com").is_err());
        assert!(parse_target("a/b").is_err());
    }

    #[test]
    fn networks_and_internal_addresses() {
        let r = HostRule::parse("127.0.0.0/8").unwrap();
        assert!(r.matches_addr("127.0.0.2".parse().unwrap(), 1));
        assert!(r.matches_addr("::ffff:127.0.0.9".parse().unwrap(), 1));
        assert!(!r.matches_addr("10.0.0.1".parse().unwrap(), 1));
        // A name pattern never allows an address, nor an address rule a name.
        assert!(!HostRule::parse("**.example.com")
            .unwrap()
            .matches_addr("127.0.0.1".parse().unwrap(), 80));
        assert!(!r.matches(&name("localhost"), 80));
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            // Breaker (stop 22): IPv4 carried inside IPv6 forms is judged as the IPv4.
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2002:a00:1::",
            "::ffff:0:7f00:1",
            "::7f00:1",
            "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1
            "192.0.0.8",
            "198.18.0.1",
            "198.19.255.1",
            "240.0.0.1",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        // Twins: the same forms carrying a public address, and public neighbours.
        for ip in [
            "93.184.216.34",
            "2606:2800:220:1::1",
            "8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "::ffff:0:808:808",
            "198.20.0.1",
            "192.0.1.1",
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8
        ] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }
}
