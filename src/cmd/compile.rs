//! `schedra compile` (not written yet).

/// Arguments of `schedra compile`.
#[derive(clap::Args)]
pub struct Args {}

/// Run the subcommand; returns the exit status.
pub fn main(_args: Args) -> i32 {
    eprintln!("error: `schedra compile` is not implemented yet");
    1
}
