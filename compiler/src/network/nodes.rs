//! Instruction selection for a bypass-network target: each source block
//! becomes a dependency graph of [`Node`]s.
//!
//! - `%v = mov %x` between virtual registers is an alias, not a node.
//! - A read of a physical register the block has already written is the
//!   written value; any other read of `$rK.c` is a register load node.
//! - Outside inputs (`ld_att`, `ld_uni`, `ld_const`) and register loads are
//!   [`Kind::Input`] nodes: never scheduled on their own, placed again in
//!   each instruction that reads them.
//! - A source op with a complex sequence (`rcp rsqrt exp2 log2`, from the
//!   target's [`Sequence`] table) is one [`Kind::Complex`] node, expanded by
//!   the scheduler as a whole.
//! - An ALU op or complex sequence with the same opcode and source nodes
//!   as an earlier one in the block is that node (the ops are pure).
//! - A `brnz` condition that is a load is read through a move node; an
//!   immediate condition is the target's constant load (`Sem::Const`).
//! - `st_var` and the last write of each physical register in the block are
//!   [`Kind::Store`] nodes; stores of one output channel keep their order,
//!   and a register's final store waits for every reader of its old value.
//!
//! Invariant: node ids are indices into [`Graph::nodes`], sources come
//! before their users, and every value read in the block is a node.

use crate::CompileError;
use schedra_ir::target::network::{Network, Sequence};
use schedra_ir::target::{Dest, OpDesc, OperandKind, Sem};
use schedra_ir::{Block, Operand, Program, Reg, TermKind};
use std::collections::HashMap;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An ALU op of the target.
    Alu,
    /// A value loaded wherever it is read: `op` with `index` (an outside
    /// input), or a register load of `reg`.
    Input,
    /// A complex sequence on its one source.
    Complex(&'static Sequence),
    /// A store: `st_var index` or a register store of `reg`.
    Store,
}

/// One node of a block's graph.
#[derive(Clone, Debug)]
pub struct Node {
    /// What it is.
    pub kind: Kind,
    /// The op (the load, ALU or store op; the register load or store op for
    /// register accesses; the source op for a complex sequence).
    pub op: &'static OpDesc,
    /// Value operands, as node ids, in operand order.
    pub srcs: Vec<usize>,
    /// The index operand (`ld_att 3`, `st_var 2`).
    pub index: u32,
    /// The register of a register load or store.
    pub reg: Option<Reg>,
    /// Nodes that must be placed in an earlier instruction than this one.
    pub after: Vec<usize>,
    /// Nodes that must be placed in this node's instruction or an earlier
    /// one.
    pub not_before: Vec<usize>,
    /// Users of this value (nodes, with repetitions), filled by [`Graph::of`].
    pub users: Vec<usize>,
    /// Position of the source instruction it came from (for priorities).
    pub order: usize,
}

/// The graph of one block.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// The nodes.
    pub nodes: Vec<Node>,
    /// The value a `brnz` tests.
    pub cond: Option<usize>,
}

fn unsupported(m: String) -> CompileError {
    CompileError::Unsupported(m)
}

struct Builder<'a> {
    p: &'a Program,
    net: &'static Network,
    g: Graph,
    vals: HashMap<&'a str, usize>,
    phys: HashMap<Reg, usize>,
    loads: HashMap<(&'static str, u32, Option<Reg>), usize>,
    last_var: HashMap<u32, usize>,
    pure: HashMap<(&'static str, Vec<usize>), usize>,
}

impl<'a> Builder<'a> {
    fn push(&mut self, n: Node) -> usize {
        self.g.nodes.push(n);
        self.g.nodes.len() - 1
    }

    fn input(&mut self, op: &'static OpDesc, index: u32, reg: Option<Reg>, order: usize) -> usize {
        if let Some(&n) = self.loads.get(&(op.name, index, reg)) {
            return n;
        }
        let n = self.push(Node { kind: Kind::Input, op, srcs: vec![], index, reg, after: vec![], not_before: vec![], users: vec![], order });
        self.loads.insert((op.name, index, reg), n);
        n
    }

    fn value(&mut self, o: &'a Operand, order: usize) -> Result<usize, CompileError> {
        match o {
            Operand::Virt(v) => self.vals.get(v.name.as_str()).copied().ok_or_else(|| {
                unsupported(format!("%{} is read in a block that does not define it: on {} a value crossing blocks lives in a register `$rK.c`", v.name, self.p.target.name))
            }),
            Operand::Phys(r) => {
                if let Some(&n) = self.phys.get(&r.base) {
                    return Ok(n);
                }
                let ld = self.p.target.op(self.net.ld_reg).ok_or_else(|| unsupported("the target has no register load".into()))?;
                let n = self.input(ld, 0, Some(r.base), order);
                Ok(n)
            }
            // An immediate (a `brnz` condition: ALU operands take none) is
            // the target's constant load of its bits.
            Operand::Imm(i) => {
                let c = self.p.target.ops.iter().find(|d| d.sem == Sem::Const).ok_or_else(|| unsupported(format!("{} has no constant load for the immediate {}", self.p.target.name, i.bits)))?;
                Ok(self.input(c, i.bits, None, order))
            }
            _ => Err(unsupported(format!("operand {o:?} is not a value"))),
        }
    }

    fn inst(&mut self, k: usize, inst: &'a schedra_ir::Inst) -> Result<(), CompileError> {
        let t = self.p.target;
        let desc = t.op(&inst.opcode).ok_or_else(|| unsupported(format!("unknown opcode `{}`", inst.opcode)))?;
        let index = desc.operands.iter().zip(&inst.srcs).find(|(k, _)| **k == OperandKind::Index).and_then(|(_, o)| o.imm()).map_or(0, |i| i.bits);
        let value_srcs: Vec<&'a Operand> = desc.operands.iter().zip(&inst.srcs).filter(|(k, _)| **k != OperandKind::Index).map(|(_, o)| o).collect();
        let mut srcs = Vec::with_capacity(value_srcs.len());
        for o in &value_srcs {
            srcs.push(self.value(o, k)?);
        }
        let result = match desc.dest {
            Dest::None => {
                let n = self.push(Node { kind: Kind::Store, op: desc, srcs, index, reg: None, after: vec![], not_before: vec![], users: vec![], order: k });
                if let Some(prev) = self.last_var.insert(index, n) {
                    if let Some(x) = self.g.nodes.get_mut(n) {
                        x.after.push(prev);
                    }
                }
                return Ok(());
            }
            _ if desc.sem == Sem::Mov && srcs.len() == 1 => srcs.first().copied().unwrap_or(0),
            _ if desc.sem.is_outside_input() => self.input(desc, index, None, k),
            _ => {
                let kind = match self.net.sequence(desc.name) {
                    Some(s) => Kind::Complex(s),
                    None if desc.slots.is_empty() => return Err(unsupported(format!("`{}` has no unit and no complex sequence", desc.name))),
                    None => Kind::Alu,
                };
                match self.pure.get(&(desc.name, srcs.clone())) {
                    Some(&n) => n,
                    None => {
                        let n = self.push(Node { kind, op: desc, srcs: srcs.clone(), index: 0, reg: None, after: vec![], not_before: vec![], users: vec![], order: k });
                        self.pure.insert((desc.name, srcs), n);
                        n
                    }
                }
            }
        };
        match &inst.dest {
            Some(Operand::Virt(v)) => {
                self.vals.insert(v.name.as_str(), result);
            }
            Some(Operand::Phys(r)) => {
                self.phys.insert(r.base, result);
            }
            _ => {}
        }
        Ok(())
    }

    /// `v` itself when it is made in the network, else a move of the load
    /// `v` into it: the terminator reads only the network, and the move is
    /// a reader like any other (a register's final store waits for it).
    /// The move comes after the given ops (`after`), so that it does not
    /// hold a place in the network while they are scheduled.
    fn network_copy(&mut self, v: usize, order: usize, after: Vec<usize>) -> Result<usize, CompileError> {
        if self.g.nodes.get(v).is_none_or(|n| n.kind != Kind::Input) {
            return Ok(v);
        }
        let mov = self.p.target.op(self.net.mov).ok_or_else(|| unsupported("the target has no move".into()))?;
        Ok(self.push(Node { kind: Kind::Alu, op: mov, srcs: vec![v], index: 0, reg: None, after, not_before: vec![], users: vec![], order }))
    }

    /// One store per register the block writes, of its last value; it may
    /// not come before any reader of the register's entry value.
    fn register_stores(&mut self) -> Result<(), CompileError> {
        let st = self.p.target.op(self.net.st_reg).ok_or_else(|| unsupported("the target has no register store".into()))?;
        let mut regs: Vec<(Reg, usize)> = self.phys.iter().map(|(r, n)| (*r, *n)).collect();
        regs.sort();
        let mut stores = Vec::with_capacity(regs.len());
        let stored: Vec<Reg> = regs.iter().map(|(r, _)| *r).collect();
        for (r, v) in regs {
            // The entry value of another register this block stores (a
            // swap) is moved into the network first: the move, not this
            // store, is what must come before that register's store.
            let swapped = self.g.nodes.get(v).is_some_and(|n| n.kind == Kind::Input && n.reg.is_some_and(|q| q != r && stored.contains(&q)));
            let v = if swapped { self.network_copy(v, self.g.nodes.len(), vec![])? } else { v };
            let order = self.g.nodes.len();
            stores.push((r, self.push(Node { kind: Kind::Store, op: st, srcs: vec![v], index: 0, reg: Some(r), after: vec![], not_before: vec![], users: vec![], order })));
        }
        // Readers of the entry value include the other registers' stores
        // (a swap stores each register's old value into the other).
        for (r, n) in stores {
            let Some(&ld) = self.loads.get(&(self.net.ld_reg, 0, Some(r))) else { continue };
            let readers: Vec<usize> = self.g.nodes.iter().enumerate().filter(|(i, x)| *i != n && x.srcs.contains(&ld)).map(|(i, _)| i).collect();
            if let Some(x) = self.g.nodes.get_mut(n) {
                x.not_before = readers;
            }
        }
        Ok(())
    }
}

impl Graph {
    /// The graph of block `b` of `p`.
    pub fn of(p: &Program, net: &'static Network, b: &Block) -> Result<Graph, CompileError> {
        let mut bl = Builder { p, net, g: Graph::default(), vals: HashMap::new(), phys: HashMap::new(), loads: HashMap::new(), last_var: HashMap::new(), pure: HashMap::new() };
        for (k, inst) in b.insts().iter().enumerate() {
            bl.inst(k, inst)?;
        }
        if let TermKind::Brnz { cond, .. } = &b.term.kind {
            let c = bl.value(cond, b.insts().len())?;
            // A loaded condition is moved into the network after every op.
            let ops: Vec<usize> = bl.g.nodes.iter().enumerate().filter(|(_, n)| matches!(n.kind, Kind::Alu | Kind::Complex(_))).map(|(i, _)| i).collect();
            bl.g.cond = Some(bl.network_copy(c, b.insts().len(), ops)?);
        }
        bl.register_stores()?;
        let mut g = bl.g;
        for i in 0..g.nodes.len() {
            let srcs = g.nodes.get(i).map(|n| n.srcs.clone()).unwrap_or_default();
            for s in srcs {
                if let Some(x) = g.nodes.get_mut(s) {
                    x.users.push(i);
                }
            }
        }
        Ok(g)
    }

    /// Height of each node: the longest chain of users below it, counting
    /// a complex sequence as its length in instructions.
    pub fn heights(&self) -> Vec<usize> {
        let mut h = vec![0usize; self.nodes.len()];
        for i in (0..self.nodes.len()).rev() {
            let Some(n) = self.nodes.get(i) else { continue };
            let own = match n.kind {
                Kind::Complex(s) => 4 + usize::from(s.post.is_some()) * 2,
                Kind::Alu => 1,
                _ => 0,
            };
            let below = n.users.iter().filter_map(|u| h.get(*u)).max().copied().unwrap_or(0);
            if let Some(x) = h.get_mut(i) {
                *x = own + below;
            }
        }
        h
    }
}
