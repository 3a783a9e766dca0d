# expect: proven
# `rsq` lands at cycle 25; the `texbar` covering the `tex` of cycle 15
# releases its next bundle at cycle 32 at the earliest.
shader kepler_barrier_least_hold
target kepler
stage fragment
form machine

b0:
    { i0: ipa $r0, 0 } wait 14
    { i0: tex $r1, $r0 }
    { i0: rsq $r3, $r0 }
    { i0: texbar 0 }
    { i0: fadd $r2, $r3, $r1 } wait 8
    { i0: st.out 0, $r2 }
    end
