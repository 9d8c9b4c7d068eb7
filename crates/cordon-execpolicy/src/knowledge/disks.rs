//! Disk-destroying commands are one kind (R-A4, issue 8 §5): every tool that overwrites a
//! block device, its partition table or its filesystem is forbidden, like `dd of=/dev/sda`
//! and `mkfs`. Read-only modes of the same tools (`fdisk -l`, `parted /dev/sda print`,
//! `sgdisk -p /dev/sda`) are not findings.
//!
//! Writes through generic tools (`cat img > /dev/sda`, `cp img /dev/nvme0n1`, `tee /dev/sda`)
//! are caught by the device-write check on their targets.

use super::{any_long_option, finding, Finding, FindingId, LongOption};
use crate::model::Decision;

/// Filesystem / swap / signature creators: forbidden whatever the arguments.
fn makes_filesystem(name: &str) -> bool {
    name.starts_with("mkfs")
        || matches!(
            name,
            "mke2fs"
                | "mkswap"
                | "wipefs"
                | "blkdiscard"
                | "mkdosfs"
                | "mkntfs"
                | "mkexfatfs"
                | "mkudffs"
                | "mkreiserfs"
                | "mkfs.btrfs"
                | "mkfs.xfs"
        )
}

fn is_device(a: &str) -> bool {
    a.starts_with("/dev/") && !crate::model::is_harmless_device(a) && a != "/dev/zero"
}

/// The tools this module knows (a cheap test before the arguments are looked at).
pub(crate) fn is_disk_tool(name: &str) -> bool {
    makes_filesystem(name)
        || matches!(
            name,
            "shred"
                | "scrub"
                | "wipe"
                | "sg_format"
                | "sg_sanitize"
                | "ddrescue"
                | "dcfldd"
                | "dc3dd"
                | "fdisk"
                | "gdisk"
                | "cfdisk"
                | "cgdisk"
                | "sfdisk"
                | "sgdisk"
                | "parted"
                | "hdparm"
                | "nvme"
                | "badblocks"
                | "cryptsetup"
                | "zpool"
                | "mdadm"
                | "pvcreate"
                | "pvremove"
                | "vgremove"
                | "lvremove"
                | "flashrom"
        )
}

/// If the segment (`name` is its folded basename, `args` its static arguments) destroys a
/// disk, the finding.
pub(crate) fn disk_overwrite(name: &str, args: &[&str]) -> Option<Finding> {
    if makes_filesystem(name) {
        return Some(finding(
            FindingId::Mkfs,
            Decision::Forbid,
            format!("{name} destroys a filesystem"),
        ));
    }
    let device = args.iter().copied().find(|a| is_device(a));
    let has = |xs: &[&str]| args.iter().any(|a| xs.contains(a));
    let starts = |p: &str| args.iter().any(|a| a.starts_with(p));
    let why: Option<String> = match name {
        // Whole-device overwriters when pointed at a device.
        "shred" | "scrub" | "wipe" | "sg_format" | "sg_sanitize" | "ddrescue" => {
            device.map(|d| format!("{name} overwrites device {d}"))
        }
        "dcfldd" | "dc3dd" => args
            .iter()
            .find_map(|a| {
                ["of=", "hof=", "ofs="]
                    .iter()
                    .find_map(|p| a.strip_prefix(p))
                    .filter(|t| is_device(t))
            })
            .map(|t| format!("{name} writes raw device {t}")),
        "fdisk" | "gdisk" | "cfdisk" | "cgdisk" | "sfdisk" | "sgdisk" | "parted" => {
            partition_table_write(name, args, device)
        }
        "hdparm" => (starts("--security-erase")
            || starts("--security-set-pass")
            || starts("--trim-sector-ranges")
            || starts("--write-sector")
            || starts("--make-bad-sector")
            || starts("--dco-restore")
            || starts("--dco-setmax")
            || starts("--fwdownload")
            || has(&["-N"]))
        .then(|| format!("hdparm {} erases or rewrites the drive", args.join(" "))),
        "nvme" => matches!(
            args.first().copied(),
            Some("format" | "sanitize" | "write-zeroes" | "write" | "delete-ns" | "fw-download")
        )
        .then(|| format!("nvme {} erases or rewrites the drive", args[0])),
        "badblocks" => (has(&["-w"]) && device.is_some())
            .then(|| "badblocks -w overwrites the device".to_string()),
        "cryptsetup" => args
            .iter()
            .find(|a| matches!(**a, "luksFormat" | "erase" | "luksErase" | "reencrypt"))
            .map(|c| format!("cryptsetup {c} destroys the data on the device")),
        "zpool" => matches!(
            args.first().copied(),
            Some("create" | "destroy" | "labelclear")
        )
        .then(|| format!("zpool {} destroys pool data", args[0])),
        "mdadm" => (has(&["-C"]) || any_long_option(args, MDADM_DESTROYS))
            .then(|| "mdadm rewrites RAID metadata on the devices".to_string()),
        "pvcreate" | "pvremove" | "vgremove" | "lvremove" => {
            Some(format!("{name} destroys volume metadata"))
        }
        "flashrom" => (has(&["-w", "-E"]) || any_long_option(args, FLASHROM_WRITES))
            .then(|| "flashrom rewrites firmware flash".to_string()),
        _ => None,
    };
    why.map(|r| finding(FindingId::DiskOverwrite, Decision::Forbid, r))
}

/// mdadm options that write RAID metadata (getopt_long: unambiguous prefixes count too).
const MDADM_DESTROYS: &[LongOption] = &[
    LongOption::abbrev("create"),
    LongOption::abbrev("zero-superblock"),
];

/// flashrom options that rewrite the flash (getopt_long: unambiguous prefixes count too).
const FLASHROM_WRITES: &[LongOption] = &[LongOption::abbrev("write"), LongOption::abbrev("erase")];

/// Partition-table editors: a write unless only their listing/printing modes are used.
fn partition_table_write(name: &str, args: &[&str], device: Option<&str>) -> Option<String> {
    let has = |xs: &[&str]| args.iter().any(|a| xs.contains(a));
    match name {
        "fdisk" | "gdisk" | "cfdisk" | "cgdisk" => {
            let listing = has(&["-l", "--list", "-x", "--list-details"]);
            device
                .filter(|_| !listing || name == "cfdisk" || name == "cgdisk")
                .map(|d| format!("{name} edits the partition table of {d}"))
        }
        "sfdisk" => {
            const READ: &[&str] = &[
                "-l",
                "--list",
                "-d",
                "--dump",
                "-J",
                "--json",
                "-s",
                "--show-size",
                "-g",
                "--show-geometry",
                "-V",
                "--verify",
                "-F",
                "--list-free",
                "--version",
            ];
            device
                .filter(|_| !has(READ))
                .map(|d| format!("sfdisk rewrites the partition table of {d}"))
        }
        "sgdisk" => {
            const READ: &[&str] = &[
                "-p",
                "--print",
                "-i",
                "-v",
                "--verify",
                "-V",
                "--version",
                "-L",
                "--list-types",
                "-O",
                "--print-mbr",
                "-P",
                "--pretend",
            ];
            let writes = args.iter().any(|a| {
                a.starts_with('-')
                    && !READ.contains(a)
                    && !a.starts_with("--info")
                    && !a.starts_with("-i")
                    && !a.starts_with("--backup")
                    && !a.starts_with("-b")
            });
            device
                .filter(|_| writes)
                .map(|d| format!("sgdisk rewrites the partition table of {d}"))
        }
        "parted" => {
            const READ: &[&str] = &["print", "p", "unit", "help", "version", "align-check"];
            let listing = has(&["-l", "--list"]);
            let cmds: Vec<&str> = args
                .iter()
                .copied()
                .skip_while(|a| !is_device(a))
                .skip(1)
                .filter(|a| !a.starts_with('-'))
                .collect();
            let writes = cmds.is_empty() || cmds.iter().any(|c| !READ.contains(c));
            device
                .filter(|_| !listing && writes)
                .map(|d| format!("parted edits the partition table of {d}"))
        }
        _ => None,
    }
}
