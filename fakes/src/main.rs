//! `barbican-fakes`: run a fake on its own, for tools outside Rust (the conformance runs that
//! put a real barbican in front of the fake OpenBao).

use std::{path::PathBuf, process::ExitCode};

use barbican_fakes::{
    keystone::{FakeKeystone, User},
    openbao::{FakeOpenBao, SelfInit},
};
use barbican_sim::clock::Clock;
use clap::{Parser, Subcommand};
use serde_json::json;

/// Fakes of the services around barbican-operator.
#[derive(Parser, Debug)]
#[command(name = "barbican-fakes", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve a fake OpenBao with the managed self-init in place until interrupted. Writes
    /// `ca.crt` and `openbao.json` (url, root token, and AppRole credentials for `barbican`)
    /// into the output directory, then prints `ready <url>`.
    Openbao {
        /// Where to write `ca.crt` and `openbao.json`.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Serve a fake Keystone until interrupted, with the users given. Writes `keystone.json`
    /// (its url) into the output directory, then prints `ready <url>`.
    Keystone {
        /// Where to write `keystone.json`.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// A user, as `name:password:project:role[,role…]`; repeatable.
        #[arg(long = "user", value_name = "USER", value_parser = parse_user)]
        users: Vec<User>,
    },
}

/// `name:password:project:role[,role…]`.
fn parse_user(text: &str) -> Result<User, String> {
    let parts: Vec<&str> = text.splitn(4, ':').collect();
    let [name, password, project, roles] = parts.as_slice() else {
        return Err("a user is name:password:project:role[,role…]".into());
    };
    Ok(User {
        name: name.to_string(),
        password: password.to_string(),
        project: project.to_string(),
        roles: roles
            .split(',')
            .filter(|r| !r.is_empty())
            .map(str::to_string)
            .collect(),
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("barbican-fakes: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result: Result<(), String> = runtime.block_on(async {
        match cli.command {
            Command::Openbao { out } => {
                let fake = FakeOpenBao::start(Clock::wall())
                    .await
                    .map_err(|e| format!("starting the fake OpenBao: {e}"))?;
                fake.self_init("openbao", "openbao", SelfInit::COMPLETE);
                let (role_id, secret_id) = fake
                    .approle_credentials("barbican")
                    .ok_or("the barbican AppRole is missing")?;
                let url = format!("https://localhost:{}", fake.addr().port());
                std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
                std::fs::write(out.join("ca.crt"), fake.ca_pem())
                    .map_err(|e| format!("writing ca.crt: {e}"))?;
                let facts = json!({"url": url, "root_token": fake.root_token(),
                    "role_id": role_id, "secret_id": secret_id});
                std::fs::write(out.join("openbao.json"), facts.to_string())
                    .map_err(|e| format!("writing openbao.json: {e}"))?;
                println!("ready {url}");
                tokio::signal::ctrl_c().await.map_err(|e| e.to_string())
            }
            Command::Keystone { out, users } => {
                let fake = FakeKeystone::start(Clock::wall())
                    .await
                    .map_err(|e| format!("starting the fake Keystone: {e}"))?;
                for user in users {
                    fake.add_user(user);
                }
                std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
                std::fs::write(
                    out.join("keystone.json"),
                    json!({"url": fake.url()}).to_string(),
                )
                .map_err(|e| format!("writing keystone.json: {e}"))?;
                println!("ready {}", fake.url());
                tokio::signal::ctrl_c().await.map_err(|e| e.to_string())
            }
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barbican-fakes: {e}");
            ExitCode::FAILURE
        }
    }
}
