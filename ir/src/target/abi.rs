//! A target's shader ABI as data: how a lowered shader reads its uniforms,
//! vertex attributes and varyings, samples a texture and writes its outputs.
//! The front end (`schedra-frontend`) lowers stage inputs and outputs only
//! through this table, so a new target describes its ABI here and needs no
//! front-end code.
//!
//! Inputs are numbered in scalar components: a `vec3` at location 2 after a
//! `vec4` at location 0 takes components 4, 5, 6 of its kind. A
//! [`Fetch::Op`] reads component N with `d = op N`; [`Fetch::Registers`]
//! declares component N as an `input` line in the next free register of the
//! stage's input range (each variable starting at a multiple of `align`).

use crate::ir::Reg;

/// How one kind of stage input reaches the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// `d = OP N` for component N (an op with one index operand).
    Op(&'static str),
    /// An `input` register: component N in the stage's next input register.
    Registers,
}

/// How the stage's outputs leave the program. Outputs are written in order:
/// the vertex position first, then user outputs by location, each as its
/// scalar components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// `OP value` once per scalar component (v3d71 `tlbw`).
    PerScalar(&'static str),
    /// `OP N, value` once per scalar component, N the output's slot: the
    /// position is slot `position`, user location L is slot `first_location + L`.
    Indexed {
        /// The output opcode.
        op: &'static str,
        /// Slot of the vertex position.
        position: u32,
        /// Slot of user location 0.
        first_location: u32,
    },
    /// `OP N, value` once per scalar component, N the component's own slot:
    /// the position's components are `position .. position + 3`, component
    /// k of user location L is `first_location + 4 L + k` (lima-gp
    /// `st_var`, one output channel per component).
    Components {
        /// The output opcode.
        op: &'static str,
        /// Slot of the position's first component.
        position: u32,
        /// Slot of user location 0's first component.
        first_location: u32,
    },
    /// Every component moved into consecutive registers from `first`, then
    /// one `OP $first:N` (gen8 `send.eot`); at most `max` components.
    Payload {
        /// The output opcode.
        op: &'static str,
        /// First payload register.
        first: Reg,
        /// Most components.
        max: u8,
    },
}

/// The ABI of one stage.
#[derive(Clone, Copy, Debug)]
pub struct StageAbi {
    /// How uniforms are read.
    pub uniform: Fetch,
    /// How the stage's inputs (attributes or varyings) are read.
    pub input: Fetch,
    /// First register of register-passed inputs.
    pub first_reg: Reg,
    /// Last register register-passed inputs may occupy.
    pub last_reg: Reg,
    /// Each register-passed variable starts at a multiple of this.
    pub align: u16,
    /// Register-passed uniforms come before the stage inputs.
    pub uniforms_first: bool,
    /// How outputs are written.
    pub output: Emit,
}

/// How a target samples a texture.
#[derive(Clone, Copy, Debug)]
pub enum Texture {
    /// One op over register runs (gen8 `send.tex`, r600 `tex`).
    Send(TexAbi),
    /// A texture unit fed by coordinate writes and read back one word at a
    /// time (v3d71's TMU).
    Unit(TexUnit),
}

/// A texture unit's sample: every coordinate after the first written with
/// `coord` (in order), the first with `lookup` (which starts the lookup),
/// then each of the texel's [`super::TEXEL_WORDS`] words read with
/// `result` (`d = result`), all in one block.
#[derive(Clone, Copy, Debug)]
pub struct TexUnit {
    /// The coordinate write (`Sem::TexCoord`).
    pub coord: &'static str,
    /// The write of the first coordinate that starts the lookup
    /// (`Sem::TexLookup`).
    pub lookup: &'static str,
    /// The read of the next result word (`Sem::TexResult`).
    pub result: &'static str,
}

/// A texture sample: coordinates moved into the registers from `coord`, then
/// `$result:N = OP $coord:M` with the op's fixed sizes, the result read from
/// the registers from `result`.
#[derive(Clone, Copy, Debug)]
pub struct TexAbi {
    /// The sample opcode.
    pub op: &'static str,
    /// First coordinate register.
    pub coord: Reg,
    /// First result register.
    pub result: Reg,
}

/// A target's ABI: one entry per stage it runs (`None`: the stage is not
/// supported), and its texture path (`None`: no texture sampling).
#[derive(Clone, Copy, Debug)]
pub struct Abi {
    /// Vertex shaders.
    pub vertex: Option<StageAbi>,
    /// Fragment shaders.
    pub fragment: Option<StageAbi>,
    /// Texture sampling.
    pub texture: Option<Texture>,
}
