//! The observable behaviour of a run: the effects on each output channel, in
//! program order per channel (semantics.md "Observable behaviour").
//!
//! Invariant: channels are kept in a `BTreeMap`, so iteration (and the
//! printed lines) follow channel-name order; within a channel the effects
//! keep the order in which the program made them. Two runs behave the same
//! exactly when their `Effects` are equal (and their branch traces agree).

use std::collections::BTreeMap;
use std::fmt;

/// Effects per output channel (`tlb`, `rt`, `export 0`, ...): one entry per
/// effect, each the words the effect carried, in program order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Effects {
    /// Channel name → its effects in program order.
    pub channels: BTreeMap<String, Vec<Vec<u32>>>,
}

impl Effects {
    /// No effects.
    pub fn new() -> Effects {
        Effects::default()
    }

    /// Record one effect of `words` on `channel` after the earlier ones.
    pub fn push(&mut self, channel: &str, words: Vec<u32>) {
        match self.channels.get_mut(channel) {
            Some(effects) => effects.push(words),
            None => {
                // Room for a few: programs usually output to a channel more
                // than once.
                let mut effects = Vec::with_capacity(4);
                effects.push(words);
                self.channels.insert(channel.to_string(), effects);
            }
        }
    }

    /// The total number of effects over all channels.
    pub fn len(&self) -> usize {
        self.channels.values().map(Vec::len).sum()
    }

    /// The number of output effects: every effect but the discards (whose
    /// entries record this number at the time they were made).
    pub fn outputs(&self) -> usize {
        self.len() - self.channels.get(schedra_ir::target::DISCARD_CHANNEL).map_or(0, Vec::len)
    }

    /// Whether there are no effects at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every effect as `(channel, words)`, channels in name order, program
    /// order within a channel (the order of the printed lines).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u32])> {
        self.channels.iter().flat_map(|(c, es)| es.iter().map(move |w| (c.as_str(), w.as_slice())))
    }
}

/// One line per effect: `<channel> 0x%08x...`, as `schedra run` prints them
/// (cli.md); every line ends with a newline.
impl fmt::Display for Effects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (channel, words) in self.iter() {
            f.write_str(channel)?;
            for w in words {
                write!(f, " 0x{w:08x}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_group_by_channel_in_name_order() {
        let mut e = Effects::new();
        e.push("tlb", vec![0x3f80_0000]);
        e.push("export 1", vec![1, 2]);
        e.push("export 0", vec![0xdead]);
        e.push("tlb", vec![7]);
        assert_eq!(e.to_string(), "export 0 0x0000dead\nexport 1 0x00000001 0x00000002\ntlb 0x3f800000\ntlb 0x00000007\n");
        assert_eq!(e.len(), 4);
    }

    #[test]
    fn order_within_a_channel_matters_across_channels_not() {
        let (mut a, mut b) = (Effects::new(), Effects::new());
        a.push("x", vec![1]);
        a.push("y", vec![2]);
        b.push("y", vec![2]);
        b.push("x", vec![1]);
        assert_eq!(a, b);
        a.push("x", vec![3]);
        b.push("x", vec![4]);
        assert_ne!(a, b);
    }
}
