# expect: violation
# the soundness mutant (bundles 24 and 25 of the compiled b0 swapped) that
# took 37 s to reject
shader gen
target v3d71
stage fragment
form machine

b0:
    { add: mov $rf4, -16 }
    { add: fsub $rf5, $rf4, $rf4 ; mul: mov $rf62, 8 }
    { add: fadd $rf63, $rf62, $rf62 ; mul: fmul $rf6, $rf5, $rf5 }
    { mul: fmul $rf7, 8, $rf6 }
    { add: fmax $rf8, $rf7, $rf4 }
    { add: shl $rf9, $rf8, $rf8 }
    { add: shl $rf10, $rf9, $rf9 }
    { add: and $rf11, $rf10, $rf4 }
    { add: tlbw $rf11 ; mul: fmul $rf12, $rf11, 0 }
    { add: and $rf13, $rf12, $rf12 }
    { add: fadd $rf14, $rf13, $rf13 }
    { mul: fmul $rf15, $rf10, $rf14 }
    { add: shl $rf16, $rf15, $rf15 }
    { add: fadd $rf17, $rf16, 10 }
    { add: shl $rf18, $rf8, $rf17 }
    { add: fadd $rf19, $rf18, $rf13 }
    { mul: umul24 $rf20, $rf19, $rf19 }
    { add: fmax $rf21, $rf20, $rf20 }
    { add: fsub $rf22, $rf21, $rf9 }
    { add: mov $rf23, $rf22 }
    { add: fadd $rf24, 7, $rf23 }
    { add: and $rf25, $rf24, $rf24 }
    { add: fmax $rf26, $rf25, $rf25 }
    { add: fmax $rf27, $rf26, $rf20 }
    { add: shr $rf29, $rf28, $rf28 }
    { add: fadd $rf28, $rf27, $rf27 ; mul: tlbw $rf27 }
    { add: shr $rf30, $rf29, $rf29 ; mul: tlbw $rf29 }
    { add: mov $rf31, $rf30 }
    { add: shr $rf32, $rf31, $rf5 }
    { add: fadd $rf33, $rf19, $rf32 }
    { add: fmax $rf34, $rf33, $rf33 }
    { add: shr $rf35, $rf23, $rf34 }
    { mul: umul24 $rf36, $rf6, $rf35 }
    { add: and $rf37, $rf35, $rf36 ; mul: tlbw $rf36 }
    { add: fadd $rf38, $rf37, $rf37 }
    { add: mov $rf39, $rf38 }
    { add: fmax $rf40, $rf39, $rf39 }
    { add: mov $rf41, $rf40 ; mul: tlbw $rf40 }
    { add: and $rf42, $rf41, $rf10 }
    { add: shr $rf43, $rf10, $rf42 }
    { add: and $rf44, $rf43, $rf43 }
    { add: fsub $rf45, $rf44, $rf44 ; mul: tlbw $rf44 }
    { add: fmax $rf46, $rf45, $rf45 }
    { add: tlbw $rf46 ; mul: umul24 $rf47, $rf10, $rf46 }
    { add: and $rf48, $rf46, $rf47 }
    { mul: umul24 $rf49, $rf48, $rf48 }
    { add: shr $rf50, $rf16, $rf49 ; mul: tlbw $rf49 }
    { add: fadd $rf51, $rf50, $rf50 ; mul: tlbw $rf50 }
    { mul: umul24 $rf52, $rf51, $rf51 }
    { add: fsub $rf53, $rf52, $rf52 ; mul: tlbw $rf52 }
    { add: fadd $rf54, $rf53, $rf53 ; mul: tlbw $rf24 }
    { add: shr $rf55, $rf37, $rf54 }
    { add: shl $rf56, $rf55, $rf55 }
    { add: shl $rf57, $rf52, $rf56 }
    { add: shl $rf58, $rf57, $rf20 }
    { add: fmax $rf59, $rf58, $rf58 }
    { add: fsub $rf60, $rf59, $rf59 }
    { add: fmax $rf61, $rf60, $rf60 }
    { add: tlbw $rf61 ; mul: fmul $rf1, $rf63, $rf61 }
    { add: shl $rf2, $rf1, $rf57 ; mul: tlbw $rf7 }
    { add: fmax $rf3, $rf2, $rf41 }
    { add: shl $rf4, $rf3, -10 ; mul: tlbw $rf3 }
    { add: tlbw $rf3 }
    { add: fsub $rf5, $rf4, $rf4 ; mul: tlbw $rf5 }
    { add: fadd $rf6, $rf16, $rf5 ; mul: tlbw $rf6 }
    { add: fadd $rf7, $rf61, $rf23 ; mul: tlbw $rf7 }
    { add: shr $rf8, $rf6, $rf6 ; mul: tlbw $rf8 }
    { add: shl $rf9, $rf8, $rf23 ; mul: tlbw $rf9 }
    { add: shr $rf10, $rf36, $rf9 ; mul: tlbw $rf10 }
    { add: fsub $rf11, $rf7, $rf7 ; mul: tlbw $rf11 }
    { add: fadd $rf12, $rf11, $rf11 ; mul: tlbw $rf12 }
    { add: tlbw $rf13 }
    { add: tlbw $rf14 }
    { add: tlbw $rf15 }
    { add: tlbw $rf16 }
    { add: tlbw $rf17 }
    { add: tlbw $rf18 }
    { add: tlbw $rf19 }
    { add: tlbw $rf20 }
    { add: tlbw $rf21 }
    { add: tlbw $rf22 }
    { add: tlbw $rf23 }
    { add: tlbw $rf24 }
    { add: tlbw $rf25 }
    { add: tlbw $rf26 }
    { add: tlbw $rf27 }
    { add: tlbw $rf28 }
    { add: tlbw $rf29 }
    { add: tlbw $rf30 }
    { add: tlbw $rf31 }
    { add: tlbw $rf32 }
    { add: tlbw $rf33 }
    { add: tlbw $rf34 }
    { add: tlbw $rf35 }
    { add: tlbw $rf36 }
    { add: tlbw $rf37 }
    { add: tlbw $rf38 }
    { add: tlbw $rf39 }
    { add: tlbw $rf40 }
    { add: tlbw $rf41 }
    { add: tlbw $rf42 }
    { add: tlbw $rf43 }
    { add: tlbw $rf44 }
    { add: tlbw $rf45 }
    { add: tlbw $rf46 }
    { add: tlbw $rf47 }
    { add: tlbw $rf48 }
    { add: tlbw $rf49 }
    { add: tlbw $rf50 }
    { add: tlbw $rf51 }
    { add: tlbw $rf52 }
    { add: tlbw $rf53 }
    { add: tlbw $rf54 }
    { add: tlbw $rf55 }
    { add: tlbw $rf56 }
    { add: tlbw $rf57 }
    { add: tlbw $rf58 }
    { add: tlbw $rf59 }
    { add: tlbw $rf60 }
    { add: tlbw $rf61 }
    { add: tlbw $rf7 }
    { add: tlbw $rf11 }
    { add: tlbw $rf12 }
    { add: tlbw $rf62 }
    { add: tlbw $rf63 }
    { add: tlbw $rf1 }
    { add: tlbw $rf2 }
    { add: tlbw $rf3 }
    { add: tlbw $rf4 }
    { add: tlbw $rf5 }
    { add: tlbw $rf6 }
    { add: tlbw $rf8 }
    { add: tlbw $rf9 }
    { add: tlbw $rf10 ; sig: thrsw }
    { }
    { }
    end
