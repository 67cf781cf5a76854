//! The `barbican-operator` binary.

use std::{path::PathBuf, process::ExitCode};

use barbican_operator::crd;
use clap::{Parser, Subcommand};

/// Kubernetes operator for OpenStack Barbican and its OpenBao secret stores.
#[derive(Parser, Debug)]
#[command(name = "barbican-operator", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print both CustomResourceDefinitions as a YAML stream, or write one file per CRD.
    Crd {
        /// Write `<plural>.<group>.yaml` files into this directory instead of printing.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("barbican-operator: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Writes to stdout; a reader that closed the pipe early (`| head`) is a normal end, not an error.
fn write_stdout(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("writing to stdout: {e}"))
        }
        _ => Ok(()),
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Crd { out_dir } => {
            let manifests = crd::manifests().map_err(|e| e.to_string())?;
            match out_dir {
                None => write_stdout(&crd::stream(&manifests))?,
                Some(dir) => {
                    std::fs::create_dir_all(&dir)
                        .map_err(|e| format!("creating {}: {e}", dir.display()))?;
                    for manifest in &manifests {
                        let path = dir.join(&manifest.file_name);
                        std::fs::write(&path, &manifest.yaml)
                            .map_err(|e| format!("writing {}: {e}", path.display()))?;
                    }
                }
            }
            Ok(())
        }
    }
}
