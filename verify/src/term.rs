//! Hash-consed terms over the program inputs.
//!
//! Every value the two programs compute is a [`Term`]: an index into one
//! [`Terms`] arena (a `Vec` of nodes plus a hash table of indices keyed by
//! node).
//! Building a node that already exists returns the existing index, so two
//! values built the same way are the *same* term and syntactic equality is
//! an integer comparison.
//!
//! Invariants kept by the constructors (both simulators build terms only
//! through them, so both sides normalise identically):
//! - arguments of commutative operations are sorted by index;
//! - operations on literals are folded to a literal: integer ops bit for
//!   bit, float ops the solver's float theory encodes as IEEE-754 single
//!   precision (transcendentals stay applications);
//! - moves are the identity: they never create a node, and neither does
//!   an integer op an identity of words decides (`x & x`, `x ^ x`,
//!   `x + 0`, `x * 0`, ...);
//! - a node's arguments always have smaller indices than the node, so the
//!   arena is in topological order and every walk can be iterative.
//!
//! The argument lists of all applications are stored back to back in one
//! flat list of the arena; a node holds only its range ([`Args`], read with
//! [`Terms::args`]), so building a term allocates nothing of its own.
//!
//! Leaves: literals, the entry input registers, outside inputs (uniforms,
//! varyings) and named symbols (block-entry values and junk). A term is
//! *closed* when it contains no symbol: it then means the same word on every
//! path, which is what lets the dataflow fixpoint carry it across blocks.

use schedra_ir::target::Sem;
use schedra_ir::Reg;
use rustc_hash::FxHashMap;

/// A term: an index into a [`Terms`] arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Term(pub u32);

/// An operation applied to argument terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fun {
    /// An ALU operation, applied to one word of each operand.
    Alu(Sem),
    /// Word `.0` of a texture sample at the argument coordinates.
    Tex(u8),
}

/// Where an application's arguments are in its arena's flat argument list
/// (read them with [`Terms::args`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Args {
    start: u32,
    len: u32,
}

impl Args {
    /// The number of arguments.
    pub fn len(self) -> usize {
        self.len as usize
    }

    /// Whether there are no arguments.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// One node of the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A 32-bit constant.
    Lit(u32),
    /// The word in this register at program entry.
    Reg(Reg),
    /// Word `.1` of uniform `.0`.
    Uniform(u32, u8),
    /// Word `.1` of varying `.0`.
    Varying(u32, u8),
    /// A named symbol (see [`Terms::symbol`]); `junk` symbols stand for
    /// unknown register contents and never equal anything else.
    Sym {
        /// Index into the symbol name table.
        id: u32,
        /// Whether this stands for unknown (garbage) contents.
        junk: bool,
    },
    /// An operation on earlier terms (its arguments are in the arena's
    /// flat list: [`Terms::args`]).
    App(Fun, Args),
}

/// What a named symbol stands for, as integers (see [`Terms::symbol_for`]):
/// the naming scheme, two numbers the name is made of, and the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SymKey {
    /// The naming scheme (one per kind of symbol the simulators make).
    pub kind: SymKind,
    /// First number the name is a function of.
    pub a: u32,
    /// Second number the name is a function of.
    pub b: u32,
}

/// The naming schemes of [`SymKey`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymKind {
    /// A class of variables at a block entry.
    Entry,
    /// A source variable read before any definition.
    Undefined,
    /// A machine register of unknown contents.
    JunkReg,
    /// A scratch slot of unknown contents.
    JunkSlot,
}

/// How a keyed symbol is spelled: a function of its key and its block
/// alone (see [`Terms::set_namer`]).
pub type Namer = Box<dyn Fn(SymKey, u32) -> String>;

/// A symbol's name: given, or spelled from its key only when asked.
#[derive(Clone, Copy, Debug)]
enum SymName {
    /// Index into `Terms::given`.
    Given(u32),
    /// A symbol of [`Terms::symbol_for`]: its key and block.
    Keyed(SymKey, u32),
}

/// The arena. Terms from one arena must not be mixed with another's.
#[derive(Default)]
pub struct Terms {
    nodes: Vec<Node>,
    /// The argument lists of all applications, back to back.
    args: Vec<Term>,
    closed: Vec<bool>,
    /// The terms, found by the hash of their node ([`hash_node`]); not
    /// the symbols, found by their number in `sym_terms`.
    index: hashbrown::HashTable<Term>,
    names: Vec<SymName>,
    /// The term of each symbol, by symbol number.
    sym_terms: Vec<Term>,
    given: Vec<String>,
    by_name: FxHashMap<String, Term>,
    by_key: FxHashMap<(SymKey, u32), Term>,
    namer: Option<Namer>,
    zero: Option<Term>,
    /// Recently built literals, by their word's low bits (a literal is
    /// built again on every visit of an op with an immediate; this finds
    /// it without hashing its node).
    lits: [Option<(u32, Term)>; 32],
}

impl std::fmt::Debug for Terms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terms").field("nodes", &self.nodes).field("names", &self.names).finish_non_exhaustive()
    }
}

/// Whether the operation is an integer operation with an exact meaning
/// (folded on literals, bit-vectors in the solver).
pub fn is_integer(sem: Sem) -> bool {
    matches!(sem, Sem::Add | Sem::Sub | Sem::UMul24 | Sem::Mul | Sem::And | Sem::Or | Sem::Xor | Sem::Shl | Sem::Shr)
}

/// The exact value of an integer operation on words (`None` for other
/// operations or a wrong number of arguments).
pub fn eval_integer(sem: Sem, args: &[u32]) -> Option<u32> {
    let (a, b) = match args {
        [a, b] => (*a, *b),
        _ => return None,
    };
    Some(match sem {
        Sem::Add => a.wrapping_add(b),
        Sem::Sub => a.wrapping_sub(b),
        Sem::UMul24 => (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff),
        Sem::Mul => a.wrapping_mul(b),
        Sem::And => a & b,
        Sem::Or => a | b,
        Sem::Xor => a ^ b,
        Sem::Shl => a << (b & 31),
        Sem::Shr => a >> (b & 31),
        _ => return None,
    })
}

impl Terms {
    /// An empty arena.
    pub fn new() -> Terms {
        Terms::default()
    }

    /// An empty arena with room for about `n` terms and `n / 4` symbols
    /// before its tables grow.
    pub fn with_capacity(n: usize) -> Terms {
        Terms {
            nodes: Vec::with_capacity(n),
            args: Vec::with_capacity(2 * n),
            closed: Vec::with_capacity(n),
            index: hashbrown::HashTable::with_capacity(n),
            names: Vec::with_capacity(n / 4),
            sym_terms: Vec::with_capacity(n / 4),
            by_key: FxHashMap::with_capacity_and_hasher(n / 4, Default::default()),
            ..Terms::default()
        }
    }

    /// Number of distinct terms built so far.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no term was built yet.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node of a term. Terms come only from this arena, so the index is
    /// in range; a foreign term yields a literal 0 rather than a panic.
    pub fn node(&self, t: Term) -> &Node {
        self.nodes.get(t.0 as usize).unwrap_or(&Node::Lit(0))
    }

    /// The arguments of an application node of this arena (empty for a
    /// foreign range rather than a panic).
    pub fn args(&self, a: Args) -> &[Term] {
        let start = a.start as usize;
        self.args.get(start..start + a.len()).unwrap_or(&[])
    }

    /// Whether the term contains no symbol (means the same word on every
    /// path through the program).
    pub fn closed(&self, t: Term) -> bool {
        self.closed.get(t.0 as usize).copied().unwrap_or(false)
    }

    /// Whether the term is a junk symbol (unknown contents).
    pub fn is_junk(&self, t: Term) -> bool {
        matches!(self.node(t), Node::Sym { junk: true, .. })
    }

    /// Build (or find) a node. An application is taken exactly as given
    /// (no normalisation), its arguments read from this arena's list.
    pub fn intern(&mut self, node: Node) -> Term {
        if let Node::App(fun, a) = node {
            let start = a.start as usize;
            let args: Vec<Term> = self.args.get(start..start + a.len()).unwrap_or(&[]).to_vec();
            return self.intern_app(fun, &args);
        }
        if let Node::Sym { id, .. } = node {
            let t = self.sym_terms.get(id as usize).copied();
            if let Some(t) = t.filter(|t| self.nodes.get(t.0 as usize) == Some(&node)) {
                return t;
            }
        }
        let hash = hash_leaf(&node);
        let nodes = &self.nodes;
        if let Some(&t) = self.index.find(hash, |t| nodes.get(t.0 as usize) == Some(&node)) {
            return t;
        }
        self.push(hash, node)
    }

    /// Add a node not in the arena yet, without indexing it.
    fn add(&mut self, node: Node) -> Term {
        let closed = match node {
            Node::Sym { .. } => false,
            Node::App(_, a) => self.args(a).iter().all(|a| self.closed(*a)),
            _ => true,
        };
        let t = Term(self.nodes.len() as u32);
        self.nodes.push(node);
        self.closed.push(closed);
        t
    }

    /// Add a node not in the arena yet and index it (`hash` is its
    /// [`hash_node`]; an application's arguments must already be in the
    /// list).
    fn push(&mut self, hash: u64, node: Node) -> Term {
        let t = self.add(node);
        let (nodes, args) = (&self.nodes, &self.args);
        self.index.insert_unique(hash, t, |u| nodes.get(u.0 as usize).map(|n| hash_node(args, n)).unwrap_or(0));
        t
    }

    /// Find or build the application of `fun` to `args` exactly (no
    /// normalisation); a new node's arguments are appended to the list.
    fn intern_app(&mut self, fun: Fun, args: &[Term]) -> Term {
        let hash = hash_app(fun, args);
        let (nodes, list) = (&self.nodes, &self.args);
        let same = |t: &Term| match nodes.get(t.0 as usize) {
            Some(Node::App(f, a)) => *f == fun && list.get(a.start as usize..a.start as usize + a.len()) == Some(args),
            _ => false,
        };
        if let Some(&t) = self.index.find(hash, same) {
            return t;
        }
        let range = Args { start: self.args.len() as u32, len: args.len() as u32 };
        self.args.extend_from_slice(args);
        self.push(hash, Node::App(fun, range))
    }

    /// The literal 0 ([`Terms::lit`]`(0)`, remembered once built).
    pub fn zero(&mut self) -> Term {
        match self.zero {
            Some(t) => t,
            None => {
                let t = self.lit(0);
                self.zero = Some(t);
                t
            }
        }
    }

    /// A literal word.
    pub fn lit(&mut self, w: u32) -> Term {
        let k = (w ^ w >> 16) as usize % 32;
        if let Some(Some((v, t))) = self.lits.get(k) {
            if *v == w {
                return *t;
            }
        }
        let t = self.intern(Node::Lit(w));
        if let Some(slot) = self.lits.get_mut(k) {
            *slot = Some((w, t));
        }
        t
    }

    /// The symbol called `name` (the same term for the same name).
    pub fn symbol(&mut self, name: &str, junk: bool) -> Term {
        if let Some(&t) = self.by_name.get(name) {
            return t;
        }
        let id = self.names.len() as u32;
        self.names.push(SymName::Given(self.given.len() as u32));
        self.given.push(name.to_string());
        let t = self.fresh_symbol(id, junk);
        self.by_name.insert(name.to_string(), t);
        t
    }

    /// The node of symbol `id`, just numbered (`id` is the number of
    /// symbols so far): no node has this id yet, so it is added without
    /// looking for an equal node first, and found by its number instead of
    /// through the index. Its term is the next node's (`Term(nodes.len())`
    /// before the call), which [`Terms::symbol_for`] records before calling.
    fn fresh_symbol(&mut self, id: u32, junk: bool) -> Term {
        let t = self.add(Node::Sym { id, junk });
        self.sym_terms.push(t);
        t
    }

    /// Spell the symbols of [`Terms::symbol_for`] with `namer` (given the
    /// key and the block). Without a namer they read `sym<id>`.
    pub fn set_namer(&mut self, namer: Namer) {
        self.namer = Some(namer);
    }

    /// The symbol of `key` in block `block`: the same term for the same
    /// key and block, a new symbol (numbered after every earlier one)
    /// otherwise. Its name is spelled by the namer only when asked
    /// ([`Terms::symbol_name`]), so callers must give distinct keys to
    /// symbols whose names differ and the same key to symbols whose names
    /// are the same.
    pub fn symbol_for(&mut self, key: SymKey, block: u32, junk: bool) -> Term {
        // One hash of the key: the new symbol's term is the next node.
        let next = Term(self.nodes.len() as u32);
        match self.by_key.entry((key, block)) {
            std::collections::hash_map::Entry::Occupied(e) => return *e.get(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(next);
            }
        }
        let id = self.names.len() as u32;
        self.names.push(SymName::Keyed(key, block));
        self.fresh_symbol(id, junk)
    }

    /// The key and block of symbol `id` when it was made by
    /// [`Terms::symbol_for`] (`None` for a given name or a foreign id).
    pub fn symbol_key(&self, id: u32) -> Option<(SymKey, u32)> {
        match self.names.get(id as usize) {
            Some(SymName::Keyed(key, block)) => Some((*key, *block)),
            _ => None,
        }
    }

    /// The name of symbol `id` (`?` for a foreign id).
    pub fn symbol_name(&self, id: u32) -> std::borrow::Cow<'_, str> {
        use std::borrow::Cow;
        match self.names.get(id as usize) {
            Some(SymName::Given(i)) => Cow::Borrowed(self.given.get(*i as usize).map(String::as_str).unwrap_or("?")),
            Some(SymName::Keyed(key, block)) => match &self.namer {
                Some(namer) => Cow::Owned(namer(*key, *block)),
                None => Cow::Owned(format!("sym{id}")),
            },
            None => Cow::Borrowed("?"),
        }
    }

    /// Apply an operation: moves return their argument, commutative
    /// arguments are sorted, integer operations on literals fold.
    pub fn app(&mut self, fun: Fun, args: Vec<Term>) -> Term {
        self.app_of(fun, &args)
    }

    /// The word of `sem` on `args` when every argument is a literal and the
    /// op's exact meaning is one the solver's float theory shares
    /// ([`crate::ieee::exact_in_fp`]): integer ops bit for bit, float ops
    /// as IEEE-754 single precision ([`crate::ieee::apply`], the evaluation
    /// counterexamples are confirmed with). Ops left uninterpreted there
    /// (transcendentals) are not folded.
    fn fold(&self, sem: Sem, args: &[Term]) -> Option<u32> {
        if !crate::ieee::exact_in_fp(sem) || args.is_empty() || args.len() > 3 {
            return None;
        }
        let mut words = [0u32; 3];
        for (w, a) in words.iter_mut().zip(args) {
            let Node::Lit(x) = self.node(*a) else { return None };
            *w = *x;
        }
        crate::ieee::apply(sem, &words[..args.len()])
    }

    /// Integer op `sem` on `args` where an identity of words gives it
    /// without a new node: an argument that is the result (`x & x`,
    /// `x | 0`, `x + 0`, `x - 0`, `x * 1`, `x & !0`, a shift by a multiple
    /// of 32) or a literal no other argument can change (`x ^ x`, `x - x`,
    /// `x & 0`, `x | !0`, `x * 0`, a 24-bit product with a factor whose low
    /// 24 bits are 0, a shift of 0).
    fn integer_identity(&mut self, sem: Sem, args: &[Term]) -> Option<Term> {
        let &[a, b] = args else { return None };
        let lit = |t: Term, nodes: &Terms| match nodes.node(t) {
            Node::Lit(w) => Some(*w),
            _ => None,
        };
        let (la, lb) = (lit(a, self), lit(b, self));
        let either = |p: &dyn Fn(u32) -> bool| la.is_some_and(p) || lb.is_some_and(p);
        let other = |w: u32| if la == Some(w) { Some(b) } else if lb == Some(w) { Some(a) } else { None };
        let word = match sem {
            Sem::And | Sem::Or if a == b => return Some(a),
            Sem::Xor | Sem::Sub if a == b => 0,
            Sem::And | Sem::Mul if either(&|w| w == 0) => 0,
            Sem::UMul24 if either(&|w| w & 0xff_ffff == 0) => 0,
            Sem::Or if either(&|w| w == u32::MAX) => u32::MAX,
            Sem::Shl | Sem::Shr if lb.is_some_and(|w| w & 31 == 0) => return Some(a),
            Sem::Shl | Sem::Shr if la == Some(0) => 0,
            Sem::And => return other(u32::MAX),
            Sem::Or | Sem::Xor | Sem::Add => return other(0),
            Sem::Sub => return (lb == Some(0)).then_some(a),
            Sem::Mul => return other(1),
            _ => return None,
        };
        Some(self.lit(word))
    }

    /// [`Terms::app`] on borrowed arguments (no allocation unless the
    /// term is new or has more than 8 arguments to sort).
    pub fn app_of(&mut self, fun: Fun, args: &[Term]) -> Term {
        let Fun::Alu(sem) = fun else { return self.intern_app(fun, args) };
        if sem == Sem::Mov {
            if let Some(&a) = args.first() {
                return a;
            }
        }
        if let Some(v) = self.fold(sem, args) {
            return self.lit(v);
        }
        if let Some(t) = self.integer_identity(sem, args) {
            return t;
        }
        if !sem.commutative() || args.is_sorted() {
            return self.intern_app(fun, args);
        }
        let mut small = [Term(0); 8];
        match small.get_mut(..args.len()) {
            Some(buf) => {
                buf.copy_from_slice(args);
                buf.sort_unstable();
                let buf: &[Term] = buf;
                self.intern_app(fun, buf)
            }
            None => {
                let mut v = args.to_vec();
                v.sort_unstable();
                self.intern_app(fun, &v)
            }
        }
    }

    /// A short human-readable rendering (at most about `budget` characters;
    /// deeper parts are elided as `…`).
    pub fn show(&self, t: Term, budget: usize) -> String {
        let mut out = String::new();
        self.show_into(t, budget, 4, &mut out);
        out
    }

    fn show_into(&self, t: Term, budget: usize, depth: u32, out: &mut String) {
        if out.len() > budget || depth == 0 {
            out.push('…');
            return;
        }
        match self.node(t) {
            Node::Lit(w) => out.push_str(&format!("{w:#x}")),
            Node::Reg(r) => out.push_str(&format!("in{r}")),
            Node::Uniform(i, w) => out.push_str(&word_name("unif", *i, *w)),
            Node::Varying(i, w) => out.push_str(&word_name("vary", *i, *w)),
            Node::Sym { id, .. } => out.push_str(&self.symbol_name(*id)),
            Node::App(fun, args) => {
                out.push_str(&fun_name(*fun));
                out.push('(');
                for (i, a) in self.args(*args).iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.show_into(*a, budget, depth - 1, out);
                }
                out.push(')');
            }
        }
    }
}

/// The hash of a node whose application arguments are in `list` (an
/// application hashes as its function and arguments, not its range).
fn hash_node(list: &[Term], n: &Node) -> u64 {
    match n {
        Node::App(f, a) => hash_app(*f, list.get(a.start as usize..a.start as usize + a.len()).unwrap_or(&[])),
        _ => hash_leaf(n),
    }
}

/// The hash of a leaf node.
fn hash_leaf(n: &Node) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    n.hash(&mut h);
    h.finish()
}

/// The hash of an application given by its parts.
fn hash_app(f: Fun, a: &[Term]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    h.write_u8(0xa9);
    f.hash(&mut h);
    a.hash(&mut h);
    h.finish()
}

fn word_name(kind: &str, i: u32, w: u8) -> String {
    if w == 0 {
        format!("{kind}[{i}]")
    } else {
        format!("{kind}[{i}].{w}")
    }
}

/// A lower-case name for an operation (used in messages and solver names).
pub fn fun_name(fun: Fun) -> String {
    match fun {
        Fun::Alu(Sem::Output(..)) => "out".to_string(),
        Fun::Alu(sem) => format!("{sem:?}").to_lowercase(),
        Fun::Tex(w) => format!("tex{w}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_literals_are_the_interned_ones() {
        let mut t = Terms::new();
        // Words that share cache slots, asked for in turns.
        let words = [0u32, 32, 1 << 16, 64, 0, 7, 0x3f80_0000, 32, 39, 7];
        let lits: Vec<Term> = words.iter().map(|w| t.lit(*w)).collect();
        for (w, l) in words.iter().zip(&lits) {
            assert_eq!(t.intern(Node::Lit(*w)), *l);
            assert_eq!(t.node(*l), &Node::Lit(*w));
        }
        assert_eq!(t.len(), 7, "one node per distinct word");
    }

    #[test]
    fn ops_on_literals_fold_where_the_float_theory_is_exact() {
        let mut t = Terms::new();
        let (two, three) = (t.lit(2.0f32.to_bits()), t.lit(3.0f32.to_bits()));
        let six = t.app(Fun::Alu(Sem::FMul), vec![two, three]);
        assert_eq!(t.node(six), &Node::Lit(6.0f32.to_bits()));
        let fma = t.app(Fun::Alu(Sem::FMad), vec![two, three, six]);
        assert_eq!(t.node(fma), &Node::Lit(12.0f32.to_bits()));
        let (x, y) = (t.lit(0xf0), t.lit(0x0f));
        let or = t.app(Fun::Alu(Sem::Or), vec![x, y]);
        assert_eq!(t.node(or), &Node::Lit(0xff));
        // A transcendental is uninterpreted in the float theory: kept.
        let cos = t.app(Fun::Alu(Sem::Cos), vec![two]);
        assert!(matches!(t.node(cos), Node::App(..)));
        // An op with a leaf argument is kept.
        let u = t.intern(Node::Uniform(0, 0));
        let product = t.app(Fun::Alu(Sem::FMul), vec![u, three]);
        assert!(matches!(t.node(product), Node::App(..)));
    }

    #[test]
    fn integer_identities_make_no_node() {
        let mut t = Terms::new();
        let x = t.intern(Node::Uniform(0, 0));
        let (zero, ones, one, shift) = (t.lit(0), t.lit(u32::MAX), t.lit(1), t.lit(64));
        let op = |t: &mut Terms, sem: Sem, a: Term, b: Term| t.app(Fun::Alu(sem), vec![a, b]);
        assert_eq!(op(&mut t, Sem::And, x, x), x);
        assert_eq!(op(&mut t, Sem::Or, x, x), x);
        assert_eq!(op(&mut t, Sem::Xor, x, x), zero);
        assert_eq!(op(&mut t, Sem::Sub, x, x), zero);
        assert_eq!(op(&mut t, Sem::And, zero, x), zero);
        assert_eq!(op(&mut t, Sem::And, x, ones), x);
        assert_eq!(op(&mut t, Sem::Or, x, ones), ones);
        assert_eq!(op(&mut t, Sem::Add, zero, x), x);
        assert_eq!(op(&mut t, Sem::Sub, x, zero), x);
        assert_eq!(op(&mut t, Sem::Mul, one, x), x);
        assert_eq!(op(&mut t, Sem::Mul, x, zero), zero);
        assert_eq!(op(&mut t, Sem::Shl, x, shift), x, "shift counts are taken mod 32");
        assert_eq!(op(&mut t, Sem::Shr, zero, x), zero);
        let big = t.lit(0x0100_0000);
        assert_eq!(op(&mut t, Sem::UMul24, x, big), zero, "only the low 24 bits multiply");
        // Not identities: each makes a node.
        for (sem, a, b) in [(Sem::Sub, zero, x), (Sem::Shl, one, x), (Sem::Mul, x, x), (Sem::UMul24, x, one)] {
            let made = op(&mut t, sem, a, b);
            assert!(matches!(t.node(made), Node::App(..)), "{sem:?}");
        }
    }

    #[test]
    fn hash_consing_shares_equal_terms() {
        let mut t = Terms::new();
        let a = t.intern(Node::Uniform(0, 0));
        let b = t.intern(Node::Varying(0, 0));
        let x = t.app(Fun::Alu(Sem::FMul), vec![a, b]);
        let y = t.app(Fun::Alu(Sem::FMul), vec![b, a]);
        assert_eq!(x, y, "commutative arguments are ordered");
        let z = t.app(Fun::Alu(Sem::FSub), vec![a, b]);
        let w = t.app(Fun::Alu(Sem::FSub), vec![b, a]);
        assert_ne!(z, w, "non-commutative arguments keep their order");
        assert_eq!(t.app(Fun::Alu(Sem::Mov), vec![x]), x);
        // Symbols are found by number, not through the index.
        let s = t.symbol("%s", false);
        let k = t.symbol_for(SymKey { kind: SymKind::JunkReg, a: 1, b: 2 }, 3, true);
        assert_eq!((t.intern(*t.node(s)), t.intern(*t.node(k))), (s, k));
        assert_eq!(t.symbol_for(SymKey { kind: SymKind::JunkReg, a: 1, b: 2 }, 3, true), k);
        let n = t.len();
        let other = t.intern(Node::Sym { id: 99, junk: false });
        assert_eq!((t.len(), t.intern(Node::Sym { id: 99, junk: false })), (n + 1, other), "a foreign symbol node is interned once");
        let flipped = t.intern(Node::Sym { id: 0, junk: true });
        assert_ne!(flipped, s);
        assert_eq!(t.intern(Node::Sym { id: 0, junk: true }), flipped);
    }

    #[test]
    fn integer_literals_fold_and_closedness_tracks_symbols() {
        let mut t = Terms::new();
        let (two, three) = (t.lit(2), t.lit(3));
        let five = t.app(Fun::Alu(Sem::Add), vec![two, three]);
        assert_eq!(t.node(five), &Node::Lit(5));
        let s = t.symbol("%a@b1", false);
        let e = t.app(Fun::Alu(Sem::Add), vec![s, two]);
        assert!(!t.closed(e));
        assert!(t.closed(five));
        assert_eq!(t.symbol("%a@b1", false), s);
    }

    #[test]
    fn arguments_live_in_the_flat_list() {
        let mut t = Terms::new();
        let a = t.intern(Node::Uniform(0, 0));
        let b = t.intern(Node::Varying(0, 0));
        let x = t.app(Fun::Alu(Sem::FSub), vec![b, a]);
        let Node::App(f, args) = *t.node(x) else { panic!("not an application") };
        assert_eq!(t.args(args), &[b, a]);
        assert_eq!(t.intern(Node::App(f, args)), x, "an application node interns to itself");
        let y = t.app(Fun::Alu(Sem::FSub), vec![a, b]);
        assert_ne!(x, y);
        assert_eq!(t.app(Fun::Alu(Sem::FSub), vec![b, a]), x);
    }

    #[test]
    fn deep_chains_do_not_recurse() {
        let mut t = Terms::new();
        let mut x = t.intern(Node::Reg(1));
        for _ in 0..100_000 {
            x = t.app(Fun::Alu(Sem::FAdd), vec![x, x]);
        }
        assert!(t.show(x, 40).contains('…'));
    }
}
