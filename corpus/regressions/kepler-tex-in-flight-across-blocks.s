# expect: violation
# b7's `texbar` stands before its `tex`: the result is read and overwritten
# before it lands and is still in flight when b7 ends (four latency
# violations). Its counterexamples, if any, must replay.
shader kepler_tex_in_flight_across_blocks
target kepler
stage fragment
form machine

b0:
    { i0: ld.attr $r8, 5 } wait 23
    { i0: fadd $r0, $r8, -32.0 } wait 8
    { i0: rsq $r1, $r0 } wait 8
    { i0: or $r1, $r1, -1.0 } wait 8
    { i0: fmul $r2, $r1, $r1 ; i1: kil.nz $r1 } wait 8
    { i0: or $r3, $r2, $r2 ; i1: mov $r2, 3 } wait 8
    { i0: lg2 $r3, $r3 } wait 8
    jmp b1

b1:
    { i0: sin $r1, $r0 ; i1: ipa $r4, 0 }
    { i0: mov $r5, 2 } wait 7
    { i0: cos $r8, $r1 } wait 8
    jmp b4

b4:
    { i0: fadd $r6, $r5, -0.0078125 ; i1: mov $r1, 1 } wait 8
    jmp b7

b7:
    { i0: mov $r9, 0.0625 ; i1: mov $r12, $r1 }
    { i0: iadd $r1, $r1, -1 } wait 7
    { i0: fmul $r10, $r9, -0.0625 ; i1: fadd $r6, $r12, $r12 }
    { i0: kil.nz $r9 } wait 7
    { i0: texbar 0 }
    { i0: tex $r7, $r10 }
    { i0: cos $r8, $r7 ; i1: mov $r7, -2.9103221e-36 } wait 8
    { i0: or $r11, $r8, 1.0 ; i1: fmul $r14, $r7, 5.74e-42 } wait 8
    { i0: shl $r13, $r11, 0x7f800000 } wait 8
    { i0: rsq $r8, $r13 } wait 8
    brnz $r1, b8, b9

b8:
    jmp b7

b9:
    { i0: sin $r1, $r7 ; i1: iadd $r5, $r5, -1 } wait 8
    { i0: fmin $r7, $r1, $r1 } wait 8
    { i0: cos $r9, $r7 } wait 8
    { i0: fmul $r1, $r9, 1.0004883 } wait 8
    brnz $r5, b5, b6

b5:
    jmp b4

b6:
    { i0: and $r5, $r5, 1.0 ; i1: ipa $r7, 0 }
    { i0: iadd $r2, $r2, -1 } wait 7
    { i0: shl $r9, $r5, $r5 } wait 5
    { i0: fmax $r10, $r7, $r7 } wait 2
    { i0: rsq $r11, $r9 } wait 5
    { i0: tex $r12, $r10 } wait 2
    { i0: or $r13, $r11, 1.0 } wait 8
    { i0: cos $r14, $r13 }
    { i0: texbar 0 } wait 2
    { i0: sin $r15, $r12 } wait 4
    { i0: lg2 $r16, $r14 } wait 3
    { i0: sin $r17, $r15 } wait 4
    { i0: fmax $r18, $r16, 0x7f800000 } wait 8
    { i0: fmul $r5, $r18, 0x7ffff }
    { i0: fmul $r5, $r17, -1 } wait 8
    brnz $r2, b2, b3

b2:
    jmp b1

b3:
    { i0: st.out 3, $r3 }
    { i0: st.out 3, $r4 }
    { i0: st.out 0, $r6 }
    { i0: st.out 1, $r8 }
    { i0: st.out 2, $r1 }
    { i0: st.out 3, $r5 }
    end
