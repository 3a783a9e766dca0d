shader doubled
target v3d71
stage fragment
form machine
# The add replaced by a shift left by one. a + a and a << 1 agree on every
# 32-bit a, which the verifier proves with bit-vector reasoning, not by
# matching the opcodes. Proven.

b0:
    { sig: ldunif 0 }
    { add: shl $rf4, $rf0, 1 }          # a << 1 == a + a (mod 2^32)
    { add: tlbw $rf4 ; sig: thrsw }
    { }
    { }
    end
