//! `cargo xtask` installs OpenBLAS when it is missing (issue #42, "fast by default").
//!
//! Why: without a system BLAS the CPU backend multiplies with Burn's `gemm`, and the
//! pretrained-size MAT forward runs at 0.94x PyTorch instead of 2.5x (docs/BENCHMARKS.md).
//! A user who runs the README's first command on a fresh machine should get the speed and
//! the figures docs/RESULTS.md documents without a manual step, as `.ci/run` does. So the
//! commands that run models ([`crate::wants_blas`]) install Debian's / Ubuntu's
//! `libopenblas0` through `apt-get` at their first matrix product when no OpenBLAS opens
//! (a command refused by its own checks installs nothing), where that needs no password
//! (root, or `sudo -n`). Elsewhere nothing is installed and the summary line of
//! `attn_core::blas::blas_summary` says what to install. `MOLATTN_INSTALL_BLAS=0` (or
//! `off`, `no`) turns the installation off; `MOLATTN_BLAS=off` turns BLAS off altogether.

use std::path::Path;
use std::process::{Command, Stdio};

/// The Debian package that holds `libopenblas.so.0` (Debian 11-13, Ubuntu 20.04-24.04).
pub const PACKAGE: &str = "libopenblas0";

/// What the machine offers for an unattended installation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// `MOLATTN_INSTALL_BLAS`'s value, if set.
    pub install_setting: Option<String>,
    /// `/etc/debian_version` exists (Debian, Ubuntu and their derivatives).
    pub debian: bool,
    /// `apt-get` is on `PATH`.
    pub apt_get: bool,
    /// The effective user is root.
    pub root: bool,
    /// `sudo -n true` succeeds (sudo without a password).
    pub passwordless_sudo: bool,
}

/// The `apt-get` arguments that install [`PACKAGE`].
const INSTALL: [&str; 6] = [
    "apt-get",
    "install",
    "-y",
    "-qq",
    "--no-install-recommends",
    PACKAGE,
];
/// The `apt-get` arguments that fetch the package lists (a fresh container has none).
const UPDATE: [&str; 3] = ["apt-get", "update", "-qq"];

/// What runs `apt-get` on `machine` (nothing for root, `sudo -n` for a user with
/// password-less sudo), or why nothing is installed there.
///
/// # Errors
/// The reason: turned off by `MOLATTN_INSTALL_BLAS`, not a Debian family system, no
/// `apt-get`, or neither root nor password-less sudo.
pub fn command_prefix(machine: &Machine) -> Result<Vec<String>, String> {
    if let Some(v) = &machine.install_setting
        && matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "off" | "no" | "false"
        )
    {
        return Err(format!("MOLATTN_INSTALL_BLAS={v}"));
    }
    if !machine.debian || !machine.apt_get {
        return Err("not a Debian / Ubuntu system with apt-get".into());
    }
    if machine.root {
        Ok(vec![])
    } else if machine.passwordless_sudo {
        // sudo resets the environment: DEBIAN_FRONTEND goes through env.
        Ok(["sudo", "-n", "env", "DEBIAN_FRONTEND=noninteractive"]
            .map(String::from)
            .to_vec())
    } else {
        Err("installing needs root (sudo asks for a password)".into())
    }
}

/// `prefix` followed by `args`, as one command line.
fn with_prefix(prefix: &[String], args: &[&str]) -> Vec<String> {
    prefix
        .iter()
        .cloned()
        .chain(args.iter().map(|a| a.to_string()))
        .collect()
}

/// Reads [`Machine`] off this system. `id -u` and then `sudo -n true` run only where an
/// installation is possible at all (not turned off, Debian with apt-get), so that a user
/// without sudo rights is not logged as a failed sudo attempt for nothing.
pub fn this_machine() -> Machine {
    let succeeds = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let apt_get = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("apt-get").is_file()));
    let mut machine = Machine {
        install_setting: std::env::var("MOLATTN_INSTALL_BLAS").ok(),
        debian: Path::new("/etc/debian_version").is_file(),
        apt_get,
        root: false,
        passwordless_sudo: false,
    };
    // Whether anything could be installed, user rights aside.
    let possible = command_prefix(&Machine {
        root: true,
        ..machine.clone()
    })
    .is_ok();
    if possible {
        machine.root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.status.success() && o.stdout.trim_ascii() == b"0");
        machine.passwordless_sudo = !machine.root && succeeds("sudo", &["-n", "true"]);
    }
    machine
}

/// Installs [`PACKAGE`] if this machine allows it unattended (see the module
/// documentation), telling the user on stderr. Returns whether the package manager
/// reported success. An `apt-get install` that fails is retried once after `apt-get
/// update` (a fresh container has no package lists).
pub fn install_openblas() -> bool {
    let Ok(prefix) = command_prefix(&this_machine()) else {
        return false;
    };
    eprintln!(
        "molattn: no OpenBLAS on this machine; installing the Debian package {PACKAGE} for \
         the CPU's matrix products (a MAT training step about 2x faster; it also becomes \
         the system's libblas.so.3; MOLATTN_INSTALL_BLAS=0 skips this)"
    );
    let run = |args: &[String]| {
        Command::new(&args[0])
            .args(&args[1..])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let install = with_prefix(&prefix, &INSTALL);
    if run(&install) {
        return true;
    }
    let ok = run(&with_prefix(&prefix, &UPDATE)) && run(&install);
    if !ok {
        eprintln!("molattn: installing {PACKAGE} failed; going on with Burn's gemm");
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn debian_root() -> Machine {
        Machine {
            install_setting: None,
            debian: true,
            apt_get: true,
            root: true,
            passwordless_sudo: false,
        }
    }

    #[test]
    fn root_on_debian_runs_apt_get_directly() {
        let prefix = command_prefix(&debian_root()).unwrap();
        assert_eq!(
            with_prefix(&prefix, &INSTALL).join(" "),
            "apt-get install -y -qq --no-install-recommends libopenblas0"
        );
    }

    #[test]
    fn a_user_with_passwordless_sudo_goes_through_sudo() {
        let machine = Machine {
            root: false,
            passwordless_sudo: true,
            ..debian_root()
        };
        let prefix = command_prefix(&machine).unwrap();
        assert_eq!(
            with_prefix(&prefix, &UPDATE).join(" "),
            "sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update -qq"
        );
    }

    #[test]
    fn nothing_is_installed_where_it_would_ask_or_cannot_work() {
        let cases = [
            (
                Machine {
                    root: false,
                    ..debian_root()
                },
                "needs root",
            ),
            (
                Machine {
                    debian: false,
                    ..debian_root()
                },
                "not a Debian",
            ),
            (
                Machine {
                    apt_get: false,
                    ..debian_root()
                },
                "apt-get",
            ),
            (
                Machine {
                    install_setting: Some("0".into()),
                    ..debian_root()
                },
                "MOLATTN_INSTALL_BLAS=0",
            ),
            (
                Machine {
                    install_setting: Some(" Off".into()),
                    ..debian_root()
                },
                "MOLATTN_INSTALL_BLAS= Off",
            ),
        ];
        for (machine, why) in cases {
            let err = command_prefix(&machine).unwrap_err();
            assert!(err.contains(why), "{machine:?}: {err}");
        }
        // Any other value leaves the installation on.
        let machine = Machine {
            install_setting: Some("1".into()),
            ..debian_root()
        };
        assert!(command_prefix(&machine).is_ok());
    }
}
