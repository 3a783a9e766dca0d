//! `schedra`: the command line of the workbench. One subcommand per use
//! (see `shared/spec/cli.md`); each lives in its own module under `cmd/` and
//! returns the process exit status. Nothing here panics on any input: bad
//! input is a one-line `path:line:col: message` and status 2.

mod cmd;

use clap::{Parser, Subcommand};

/// mimalloc instead of glibc malloc: a fuzz case makes tens of thousands of
/// small short-lived allocations; with mimalloc a case runs ~22% fewer
/// instructions (docs/performance.md, "Allocator").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Finds and proves away the bugs GPU shader compilers make when they
/// schedule instructions and allocate registers.
#[derive(Parser)]
#[command(name = "schedra", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile a source-form shader to the machine form of its target.
    Compile(cmd::compile::Args),
    /// Prove that a machine program implements a source program (or compile and prove).
    Verify(cmd::verify::Args),
    /// Interpret either form on seeded inputs and print its effects.
    Run(cmd::run::Args),
    /// Print a program in canonical form.
    Fmt(cmd::fmt::Args),
    /// Generate programs, compile, verify and run them until the time is spent.
    Fuzz(cmd::fuzz::Args),
    /// Shrink a failing source program while it keeps failing the same way.
    Reduce(cmd::reduce::Args),
    /// List the targets and their descriptions.
    Targets(cmd::targets::Args),
    /// Lower a shader (WGSL, SPIR-V, GLSL) to a target's source form.
    Lower(cmd::lower::Args),
}

fn main() {
    // Like other Unix tools, end quietly when the reader of our output goes
    // away (`schedra run x.ir | head -1`) instead of failing on the write.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread
    // starts has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            end(code);
        }
    };
    let code = match cli.command {
        Command::Compile(a) => cmd::compile::main(a),
        Command::Verify(a) => cmd::verify::main(a),
        Command::Run(a) => cmd::run::main(a),
        Command::Fmt(a) => cmd::fmt::main(a),
        Command::Fuzz(a) => cmd::fuzz::main(a),
        Command::Reduce(a) => cmd::reduce::main(a),
        Command::Targets(a) => cmd::targets::main(a),
        Command::Lower(a) => cmd::lower::main(a),
    };
    end(code);
}

/// End the process with `code`, flushing standard output and error but
/// running no exit-time destructors. Threads may still be inside libz3
/// when a command returns: a solver worker that ignored its interrupt and
/// was left detached (schedra-verify's bounded check), or a campaign thread
/// abandoned at its deadline. `exit` would tear down libz3's static state
/// under them, which has crashed the process with SIGFPE after a finished
/// campaign; `_exit` ends every thread at once instead. Nothing of ours
/// needs exit-time work: each command has dropped (and so flushed) its
/// files before returning.
fn end(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    write_coverage_profile();
    // SAFETY: `_exit` has no preconditions; it never returns.
    unsafe { libc::_exit(code) }
}

/// In a build instrumented for coverage (`-C instrument-coverage --cfg
/// schedra_coverage`, scripts/coverage-campaign.sh), write the profile that
/// LLVM's runtime would write at `exit`, which [`end`]'s `_exit` skips.
#[cfg(schedra_coverage)]
fn write_coverage_profile() {
    extern "C" {
        fn __llvm_profile_write_file() -> i32;
    }
    // SAFETY: the profiling runtime linked into every instrumented binary
    // defines this function; it writes the counters to LLVM_PROFILE_FILE.
    unsafe {
        __llvm_profile_write_file();
    }
}

#[cfg(not(schedra_coverage))]
fn write_coverage_profile() {}
