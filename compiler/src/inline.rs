//! A short list kept inline: [`InlineVec`] holds up to `N` items in place
//! and moves to the heap only when it grows beyond that. The compiler's
//! per-instruction summaries (the registers an op reads and writes, its
//! effects, its liveness variables) almost always have a handful of items,
//! so building them allocates nothing.
//!
//! Invariant: the items are `inline[..len]` while `heap` is empty, and
//! exactly `heap` once it is not (then `len` is unused).

/// An item type an [`InlineVec`] can hold: a plain value with a filler for
/// the unused inline places (never observable through the list).
pub trait InlineItem: Copy {
    /// The value the unused inline places hold.
    const FILL: Self;
}

impl InlineItem for usize {
    const FILL: usize = 0;
}

impl<A: InlineItem, B: InlineItem> InlineItem for (A, B) {
    const FILL: (A, B) = (A::FILL, B::FILL);
}

/// A list of `T` that stores up to `N` items without allocating.
#[derive(Clone)]
pub struct InlineVec<T: InlineItem, const N: usize> {
    len: usize,
    inline: [T; N],
    heap: Vec<T>,
}

impl<T: InlineItem, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        InlineVec {
            len: 0,
            inline: [T::FILL; N],
            heap: Vec::new(),
        }
    }
}

impl<T: InlineItem, const N: usize> InlineVec<T, N> {
    /// Append `x` (moving everything to the heap when the inline places
    /// are full). The usual case, a free inline place, is small enough to
    /// be inlined into the caller.
    #[inline]
    pub fn push(&mut self, x: T) {
        if self.heap.is_empty() {
            if let Some(slot) = self.inline.get_mut(self.len) {
                *slot = x;
                self.len += 1;
                return;
            }
        }
        self.push_heap(x);
    }

    /// [`InlineVec::push`] once the inline places are full.
    #[cold]
    fn push_heap(&mut self, x: T) {
        if self.heap.is_empty() {
            self.heap.reserve(self.len + 1);
            self.heap.extend_from_slice(&self.inline[..self.len.min(N)]);
        }
        self.heap.push(x);
    }
}

impl<T: InlineItem, const N: usize> std::ops::Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        if self.heap.is_empty() {
            &self.inline[..self.len.min(N)]
        } else {
            &self.heap
        }
    }
}

impl<T: InlineItem, const N: usize> std::ops::DerefMut for InlineVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        if self.heap.is_empty() {
            &mut self.inline[..self.len.min(N)]
        } else {
            &mut self.heap
        }
    }
}

impl<T: InlineItem, const N: usize> Extend<T> for InlineVec<T, N> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        items.into_iter().for_each(|x| self.push(x));
    }
}

impl<T: InlineItem, const N: usize> FromIterator<T> for InlineVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut v = InlineVec::default();
        v.extend(items);
        v
    }
}

impl<'a, T: InlineItem, const N: usize> IntoIterator for &'a InlineVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: InlineItem + PartialEq, const N: usize> PartialEq for InlineVec<T, N> {
    fn eq(&self, o: &Self) -> bool {
        **self == **o
    }
}

impl<T: InlineItem + Eq, const N: usize> Eq for InlineVec<T, N> {}

impl<T: InlineItem + std::fmt::Debug, const N: usize> std::fmt::Debug for InlineVec<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_past_the_inline_places_in_order() {
        let mut v: InlineVec<usize, 2> = InlineVec::default();
        assert!(v.is_empty());
        v.extend([1, 2]);
        assert_eq!(&v[..], &[1, 2]);
        v.push(3);
        v.push(4);
        assert_eq!(&v[..], &[1, 2, 3, 4]);
        let w: InlineVec<usize, 2> = [1, 2, 3, 4].into_iter().collect();
        assert_eq!(v, w);
    }
}
