//! The compiler flags shared by every subcommand that compiles
//! (`--sched`, `--ra`, `--inject`, `--stress-regalloc`, `--post`), turned into
//! [`Options`].

use schedra_compiler::{Fault, Options, Post, Ra, Sched};

/// `--sched topdown|bottomup --ra split|graph --inject FAULT --stress-regalloc N --post list|peephole`.
#[derive(clap::Args, Clone, Debug)]
pub struct CompilerFlags {
    /// Pre-RA scheduling direction.
    #[arg(long, value_parser = ["topdown", "bottomup"], default_value = "topdown")]
    pub sched: String,
    /// Register allocation mode.
    #[arg(long, value_parser = ["split", "graph"], default_value = "split")]
    pub ra: String,
    /// Switch on one named compiler fault (`schedra compile --inject list` prints them).
    #[arg(long)]
    pub inject: Option<String>,
    /// Allocate from only the N highest-numbered registers (more when the
    /// program needs more), to exercise spill code on small programs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub stress_regalloc: Option<u16>,
    /// Post-RA mode on a target with encoded waits (kepler): the list
    /// scheduler, or nouveau's dual-issue peephole on the allocated order.
    #[arg(long, value_parser = ["list", "peephole"], default_value = "list")]
    pub post: String,
}

impl CompilerFlags {
    /// The compiler options these flags name; `Err` is a usage message for an
    /// unknown fault.
    pub fn options(&self) -> Result<Options, String> {
        let sched = if self.sched == "bottomup" { Sched::BottomUp } else { Sched::TopDown };
        let ra = if self.ra == "graph" { Ra::Graph } else { Ra::Split };
        let inject = match self.inject.as_deref() {
            None => None,
            Some(n) => Some(Fault::from_name(n).ok_or_else(|| {
                let names: Vec<_> = Fault::every().map(|f| f.name()).collect();
                format!("unknown fault `{n}` (known: {})", names.join(", "))
            })?),
        };
        let post = if self.post == "peephole" { Post::Peephole } else { Post::List };
        Ok(Options { sched, ra, inject, stress_regalloc: self.stress_regalloc, post })
    }
}
