//! The operator's log, captured in memory for the scenarios of this process, so a step can
//! check what it never says (a secret ID). Every level of the operator's own targets is kept.

use std::{
    io::Write,
    sync::{Mutex, OnceLock},
};

use tracing_subscriber::{EnvFilter, fmt::MakeWriter};

static CAPTURED: OnceLock<Mutex<Vec<u8>>> = OnceLock::new();

fn buffer() -> &'static Mutex<Vec<u8>> {
    CAPTURED.get_or_init(Mutex::default)
}

/// Writes into the shared buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Captured;

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        buffer()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Self::Writer {
        Captured
    }
}

/// Installs the capture as the process's subscriber (once; later calls do nothing).
pub fn install() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new("barbican_operator=trace"))
        .with_writer(Captured)
        .with_ansi(false)
        .try_init();
}

/// Everything captured so far.
pub fn contents() -> String {
    String::from_utf8_lossy(&buffer().lock().unwrap_or_else(|p| p.into_inner())).into_owned()
}

/// What was captured from byte `offset` on, and where the capture ends now: a reader that
/// keeps the end reads each line once, without copying the whole log every time.
pub fn since(offset: usize) -> (String, usize) {
    let buffer = buffer().lock().unwrap_or_else(|p| p.into_inner());
    let tail = buffer.get(offset..).unwrap_or_default();
    (String::from_utf8_lossy(tail).into_owned(), buffer.len())
}
