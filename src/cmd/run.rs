//! `schedra run` (not written yet).

/// Arguments of `schedra run`.
#[derive(clap::Args)]
pub struct Args {}

/// Run the subcommand; returns the exit status.
pub fn main(_args: Args) -> i32 {
    eprintln!("error: `schedra run` is not implemented yet");
    1
}
