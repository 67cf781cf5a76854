//! The `barbican-operator` binary.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, sync::Arc};

use barbican_operator::{
    admission::{
        server::{ApiLookups, provider, router, serve},
        tls::ReloadingCertificate,
    },
    crd,
};
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
    /// Serve the defaulting and validating admission webhooks for both kinds over HTTPS.
    Webhook {
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0:9443")]
        bind: SocketAddr,
        /// PEM certificate chain; reloaded when the file changes (cert-manager rotation).
        #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs/tls.crt")]
        tls_cert_file: PathBuf,
        /// PEM private key; reloaded together with the certificate.
        #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs/tls.key")]
        tls_key_file: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // One TLS provider for every client and server in the process (kube, the webhook).
    let _ = rustls::crypto::ring::default_provider().install_default();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
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
        Command::Webhook {
            bind,
            tls_cert_file,
            tls_key_file,
        } => {
            let runtime =
                tokio::runtime::Runtime::new().map_err(|e| format!("starting the runtime: {e}"))?;
            runtime.block_on(webhook(bind, tls_cert_file, tls_key_file))
        }
    }
}

async fn webhook(bind: SocketAddr, cert: PathBuf, key: PathBuf) -> Result<(), String> {
    let certificate = ReloadingCertificate::new(cert, key, provider())
        .map_err(|e| format!("loading the serving certificate: {e}"))?;
    let client = kube::Client::try_default()
        .await
        .map_err(|e| format!("building the API client (in-cluster or KUBECONFIG): {e}"))?;
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|e| format!("binding {bind}: {e}"))?;
    tracing::info!(%bind, "serving admission webhooks");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    serve(
        listener,
        Arc::new(certificate),
        router(Arc::new(ApiLookups::new(client))),
        shutdown,
    )
    .await
    .map_err(|e| format!("configuring TLS: {e}"))
}
