# expect: violation
# the mutant: bundles 45 and 46 of the compiled program swapped, so `or $r5` runs before `texbar 1`.
shader kepler_landing_order
target kepler
stage fragment
form machine

b0:
    { i0: ld.attr $r13, 2 }
    { i0: ld.attr $r2, 2 }
    { i0: ld.const $r6, 7 } wait 21
    { i0: and $r13, $r13, $r13 } wait 8
    { i0: fmul $r0, $r13, $r13 } wait 8
    { i0: fadd $r4, $r0, 0x80000000 } wait 8
    { i0: or $r4, $r4, $r4 } wait 8
    { i0: xor $r1, $r4, 0x7f800000 }
    { i0: and $r3, $r4, 0x7fc00000 } wait 7
    { i0: and $r1, $r1, -1 } wait 8
    { i0: fadd $r1, $r1, $r13 } wait 8
    { i0: fmul $r5, $r13, $r1 } wait 8
    { i0: xor $r7, $r5, 0x7fc00000 ; i1: ld.attr $r5, 1 } wait 8
    { i0: fadd $r3, $r3, $r7 ; i1: shr $r12, $r7, 1.0 } wait 8
    { i0: xor $r2, $r2, $r3 }
    { i0: shr $r4, $r3, $r3 ; i1: fmul $r2, $r6, $r1 } wait 8
    { i0: mov $r1, $r4 ; i1: or $r3, $r2, $r0 } wait 8
    { i0: fmul $r6, $r3, $r3 ; i1: mov $r4, $r3 }
    { i0: mov $r3, $r1 }
    { i0: tex $r8, $r1 }
    { i0: ld.attr $r1, 5 } wait 5
    { i0: and $r9, $r0, $r6 ; i1: ld.const $r0, 3 }
    { i0: and $r6, $r3, $r2 ; i1: mov $r10, $r3 } wait 7
    { i0: mov $r3, $r0 }
    { i0: shr $r4, $r9, $r6 ; i1: ld.const $r6, 3 }
    { i0: texbar 0 }
    { i0: xor $r2, $r8, $r8 ; i1: ld.attr $r8, 3 } wait 5
    { i0: fmul $r1, $r1, -1 }
    { i0: mov $r11, $r4 ; i1: shr $r13, $r6, 0x7f800000 } wait 1
    { i0: imul $r0, $r5, $r2 ; i1: shr $r5, $r6, $r6 }
    { i0: fmul $r6, $r2, $r2 ; i1: mov $r4, $r3 }
    { i0: ld.attr $r2, 3 } wait 4
    { i0: mov $r3, $r11 } wait 1
    { i0: fadd $r4, $r5, $r5 } wait 8
    { i0: tex $r4, $r6 }
    { i0: tex $r6, $r1 }
    { i0: tex $r5, $r0 }
    { i0: mov $r0, $r10 ; i1: and $r8, $r3, 0x7fc00000 } wait 8
    { i0: and $r1, $r8, $r8 ; i1: st.out 2, $r2 }
    { i0: texbar 2 }
    { i0: and $r4, $r4, $r9 ; i1: st.out 2, $r13 }
    { i0: tex $r8, $r9 }
    { i0: ld.const $r9, 6 ; i1: and $r2, $r12, $r12 }
    { i0: texbar 2 }
    { i0: st.out 0, $r6 }
    { i0: or $r5, $r12, $r5 }
    { i0: texbar 1 }
    { i0: fadd $r3, $r1, $r7 ; i1: ld.const $r1, 4 } wait 1
    { i0: fmul $r0, $r4, $r0 } wait 6
    { i0: and $r4, $r9, $r3 }
    { i0: texbar 0 }
    { i0: xor $r3, $r5, $r3 ; i1: st.out 1, $r8 }
    { i0: st.out 3, $r0 }
    { i0: st.out 1, $r10 }
    { i0: st.out 3, $r2 }
    { i0: st.out 1, $r11 }
    { i0: st.out 3, $r1 } wait 1
    { i0: st.out 2, $r4 }
    { i0: st.out 2, $r5 }
    end
