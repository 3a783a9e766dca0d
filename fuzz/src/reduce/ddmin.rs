//! Chunked delta debugging over a list of opportunities.
//!
//! Algorithm (ddmin as llvm-reduce and spirv-reduce use it): the
//! opportunities of one pass are numbered `0..n` on the program the pass
//! started from. A set of *applied* opportunities starts empty. With a chunk
//! size that starts at `n` and halves down to 1, the not-yet-applied
//! opportunities are cut into consecutive chunks of that size; for each chunk
//! the caller tries `applied ∪ chunk` and, if that candidate is accepted, the
//! chunk joins `applied`. Big chunks come first, so a program whose
//! interesting core is small loses most of its material in a few tests.
//!
//! Invariant: the set handed to the caller is always sorted and contains
//! every accepted chunk; each call tries a set not tried before in this run,
//! and the run makes at most `2n` calls (every level of halving tries each
//! remaining opportunity once, and the levels' sizes sum to below `2n`
//! chunks). [`Verdict::Stop`] ends the run at once.

/// What the caller decided about one candidate set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The candidate is valid and interesting: keep the chunk.
    Accept,
    /// Invalid or not interesting: drop the chunk.
    Reject,
    /// The budget is spent: end the run.
    Stop,
}

/// Run ddmin over `n` opportunities; `try_set` gets each candidate set
/// (sorted indices). Returns the accepted set and whether a `Stop` ended
/// the run.
pub fn ddmin(n: usize, try_set: &mut dyn FnMut(&[usize]) -> Verdict) -> (Vec<usize>, bool) {
    let mut applied: Vec<usize> = Vec::new();
    let mut taken = vec![false; n];
    let mut size = n;
    while size >= 1 {
        let rest: Vec<usize> = (0..n).filter(|&i| !taken[i]).collect();
        if rest.is_empty() {
            break;
        }
        for chunk in rest.chunks(size.min(rest.len())) {
            let mut cand = applied.clone();
            cand.extend_from_slice(chunk);
            cand.sort_unstable();
            match try_set(&cand) {
                Verdict::Accept => {
                    chunk.iter().for_each(|&i| taken[i] = true);
                    applied = cand;
                }
                Verdict::Reject => {}
                Verdict::Stop => return (applied, true),
            }
        }
        if size == 1 {
            break;
        }
        size = size.div_ceil(2);
    }
    (applied, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A "program" of `n` items where the items in `keep` must stay: a
    /// candidate set is accepted iff it removes none of them.
    fn run(n: usize, keep: &[usize]) -> (Vec<usize>, usize) {
        let mut calls = 0;
        let (applied, stopped) = ddmin(n, &mut |set| {
            calls += 1;
            if set.iter().any(|i| keep.contains(i)) {
                Verdict::Reject
            } else {
                Verdict::Accept
            }
        });
        assert!(!stopped);
        (applied, calls)
    }

    #[test]
    fn removes_everything_but_the_core_in_few_calls() {
        let (applied, calls) = run(300, &[137]);
        assert_eq!(applied.len(), 299);
        assert!(!applied.contains(&137));
        assert!(calls <= 2 * 10 + 2, "{calls} calls");
    }

    #[test]
    fn two_separate_items_survive() {
        let (applied, calls) = run(64, &[3, 60]);
        assert_eq!(applied.len(), 62);
        assert!(calls < 128);
    }

    #[test]
    fn stop_ends_at_once() {
        let mut calls = 0;
        let (applied, stopped) = ddmin(10, &mut |_| {
            calls += 1;
            Verdict::Stop
        });
        assert!(stopped && applied.is_empty() && calls == 1);
    }

    #[test]
    fn empty_list_makes_no_calls() {
        let (applied, calls) = run(0, &[]);
        assert!(applied.is_empty() && calls == 0);
    }
}
