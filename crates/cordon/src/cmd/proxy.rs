//! `cordon proxy`: the filtering proxy standalone (issue 10 §7).

use crate::cli::ProxyArgs;
use anyhow::{bail, Context, Result};
use cordon_policy::hosts::{normalize_name, HostRule};
use cordon_policy::{select_profile, Config, NetworkRules};
use cordon_proxy::{DecisionLog, ProxyConfig, ProxyPolicy, Resolver};
use cordon_session::trust::user_config_path;
use std::collections::HashMap;
use std::net::IpAddr;

/// The rules: the profile's (when `--profile` is given, or `--config`, whose
/// `default_profile` is then taken: new-user pass 201 #3, a `--config` alone was not even
/// read) plus the flags.
fn rules(args: &ProxyArgs) -> Result<NetworkRules> {
    // A bad flag value is said with the flag's name, before the profile's lists are
    // added (new-user pass: the flags' errors named `network.allow`/`network.ports`,
    // the profile's keys; `--port 0` is refused by clap).
    for (flag, list) in [("--allow", &args.allow), ("--deny", &args.deny)] {
        for e in list {
            HostRule::parse(e).map_err(|m| anyhow::anyhow!("{flag}: {m}"))?;
        }
    }
    let mut r = NetworkRules::default();
    if args.profile.is_some() || args.config.is_some() {
        let name = args.profile.as_deref();
        let config = match &args.config {
            Some(p) => Some(Config::load(p)?),
            None => match user_config_path().filter(|p| p.is_file()) {
                Some(p) => Some(Config::load(&p)?),
                None => None,
            },
        };
        r = select_profile(config.as_ref(), name)?.network_rules;
    }
    r.allow.extend(args.allow.iter().cloned());
    r.deny.extend(args.deny.iter().cloned());
    r.ports.extend(args.ports.iter().copied());
    Ok(r)
}

fn resolver(map: &[String]) -> Result<Resolver> {
    if map.is_empty() {
        return Ok(Resolver::System);
    }
    let mut m: HashMap<String, Vec<IpAddr>> = HashMap::new();
    for e in map {
        let Some((name, ip)) = e.split_once('=') else {
            bail!("--map {e:?}: write NAME=IP");
        };
        let name = normalize_name(name).map_err(|e| anyhow::anyhow!("--map: {e}"))?;
        let ip: IpAddr = ip
            .parse()
            .with_context(|| format!("--map {e:?}: {ip:?} is not an address"))?;
        m.entry(name).or_default().push(ip);
    }
    Ok(Resolver::Map(m))
}

pub fn proxy(args: ProxyArgs) -> Result<i32> {
    let rules = rules(&args)?;
    let policy = ProxyPolicy::from_rules(&rules).map_err(|e| anyhow::anyhow!(e))?;
    if rules.allow.is_empty() {
        eprintln!("cordon proxy: warning: the allow list is empty, every request will be blocked");
    }
    let mut cfg = ProxyConfig::new(policy);
    cfg.resolver = resolver(&args.map)?;
    if let Some(p) = &args.log {
        cfg.log = DecisionLog::open(p)
            .with_context(|| format!("cannot open the decision log {}", p.display()))?;
    }
    let running = cordon_proxy::spawn(cfg, args.listen, args.threads)
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let a = running.addr;
    if args.json {
        println!("{}", serde_json::json!({ "listen": a.to_string() }));
    } else {
        println!("cordon proxy: listening on {a} (HTTP absolute-form, CONNECT and SOCKS5)");
        println!("  export HTTP_PROXY=http://{a} HTTPS_PROXY=http://{a} ALL_PROXY=socks5h://{a}");
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park();
    }
}
