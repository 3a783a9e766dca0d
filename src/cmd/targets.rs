//! `schedra targets [NAME]`: print each target's description (or one
//! target's) from the same data the compiler and the verifier use: name,
//! summary, register file, slots, the machine clock, sizes, reserved,
//! implicit, payload and input registers, how a program ends, then the
//! opcode table with operands, destination, sizes, slots, latencies and read
//! windows. An unknown name is a usage error (status 2).

use super::{input, out};
use schedra_ir::target::{self, Dest, OpDesc, OperandKind, Overlap, ProgramEnd, Sizes, Target};
use schedra_ir::Stage;
use std::fmt::Write;

/// Arguments of `schedra targets`.
#[derive(clap::Args)]
pub struct Args {
    /// Show only this target (`v3d71`, `gen8`, `r600`, `kepler`).
    pub name: Option<String>,
}

/// Run the subcommand; returns the exit status (0, or 2 for an unknown name).
pub fn main(args: Args) -> i32 {
    let chosen: Vec<&'static Target> = match input::target_arg(args.name.as_deref()) {
        Ok(Some(t)) => vec![t],
        Ok(None) => target::all().to_vec(),
        Err(e) => return input::bad(e),
    };
    let texts: Vec<String> = chosen.iter().map(|t| describe(t)).collect();
    out::finish(out::text(&texts.join("\n")), 0)
}

fn regs(t: &Target, rs: &[u16]) -> String {
    if rs.is_empty() {
        return "none".to_string();
    }
    rs.iter().map(|&r| t.regs.name(r)).collect::<Vec<_>>().join(" ")
}

/// The full text description of one target.
pub fn describe(t: &Target) -> String {
    let mut s = String::new();
    let last = t.regs.name(t.regs.count.saturating_sub(1));
    let _ = writeln!(s, "{} - {}", t.name, t.summary);
    let _ = writeln!(s, "  registers:      {}-{last} ({} registers)", t.regs.name(0), t.regs.count);
    let _ = writeln!(s, "  slots:          {}", t.slots.join(" "));
    let _ = writeln!(s, "  clock:          {}", t.clock.describe());
    if let Some(c) = t.waits {
        let _ = writeln!(s, "  waits:          unknown-landing results arrive {}-{} cycles after issue; SFU ops {} cycles apart", c.landing.0, c.landing.1, c.sfu_spacing);
    }
    let _ = writeln!(s, "  default stage:  {}", t.default_stage.as_str());
    let _ = writeln!(s, "  sizes:          ALU operands up to {}, values up to {} registers", t.max_alu_size, t.max_value_size);
    let _ = writeln!(s, "  reserved:       {}", regs(t, t.reserved));
    let _ = writeln!(s, "  implicit:       {}", regs(t, t.implicit_regs));
    for st in [Stage::Vertex, Stage::Fragment, Stage::Compute] {
        let _ = writeln!(s, "  payload {:<9} {}", format!("{}:", st.as_str()), regs(t, t.payload(st)));
    }
    let inputs: Vec<String> = t.inputs.iter().map(|p| run(t, *p)).collect();
    let _ = writeln!(s, "  inputs:         {}", if inputs.is_empty() { "none".to_string() } else { inputs.join(" ") });
    let _ = writeln!(s, "  immediates:     at most {} distinct per bundle", t.rules.max_bundle_imms());
    let _ = writeln!(s, "  program end:    {}", program_end(t));
    let _ = writeln!(s, "  opcodes:");
    let _ = writeln!(s, "    {:<20} {:<22} {:<10} {:<14} {:<12} {:>7}  notes", "opcode", "operands", "dest", "sizes", "slots", "latency");
    for op in t.ops {
        let _ = writeln!(s, "    {}", op_row(t, op));
    }
    s
}

/// A register run as the text format spells it (without `$`).
fn run(t: &Target, p: schedra_ir::PhysReg) -> String {
    match p.size {
        1 => t.regs.name(p.base),
        n => format!("{}:{n}", t.regs.name(p.base)),
    }
}

/// How a program of `t` ends, in words.
fn program_end(t: &Target) -> String {
    match t.end {
        ProgramEnd::Plain => "no end sequence".to_string(),
        ProgramEnd::LastOp(op) => format!("`{op}` ends the thread as the last op of the program"),
        ProgramEnd::Marker { marker, delay_slots, untouchable } => {
            format!("`{marker}` followed by {delay_slots} delay-slot bundles, which may not touch {}", regs(t, untouchable))
        }
    }
}

fn op_row(t: &Target, op: &OpDesc) -> String {
    let operands: Vec<&str> = op
        .operands
        .iter()
        .map(|k| match k {
            OperandKind::Value => "value",
            OperandKind::Reg => "reg",
            OperandKind::Index => "index",
        })
        .collect();
    let dest = match op.dest {
        Dest::None => "none".to_string(),
        Dest::Explicit => "explicit".to_string(),
        Dest::Implicit(r) => format!("-> {}", t.regs.name(r)),
        Dest::Unit => "unit".to_string(),
    };
    let sizes = match op.sizes {
        Sizes::Uniform => "uniform".to_string(),
        Sizes::Fixed { dest, src } => format!("d:{dest} s:{src}"),
        Sizes::Any => "any".to_string(),
    };
    let mut notes = vec![format!("{:?}", op.sem)];
    if op.sfu {
        notes.push("sfu".to_string());
    }
    if op.header_is_dest {
        notes.push("header=dest".to_string());
    }
    if op.machine_only {
        notes.push("machine form only".to_string());
    }
    if let Some(max) = op.window().max {
        notes.push(format!("readable {}..={max}", op.window().min));
    }
    if op.overlap == Overlap::Any && op.dest != Dest::None {
        notes.push("may overlap sources".to_string());
    }
    if op.class != schedra_ir::target::OpClass::Other {
        notes.push(format!("class {:?}", op.class).to_lowercase());
    }
    if op.unknown_landing {
        notes.push("lands at an unknown time".to_string());
    }
    let operands = if operands.is_empty() { "-".to_string() } else { operands.join(", ") };
    format!("{:<20} {:<22} {:<10} {:<14} {:<12} {:>7}  {}", op.name, operands, dest, sizes, op.slots.join(" "), op.latency, notes.join(", "))
}
