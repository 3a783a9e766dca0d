shader spill_fill
target gen8
stage fragment
form machine
# The product goes through scratch memory (a spill to slot 0 and a fill back
# into g14) on its way to the add. The verifier follows the value through the
# slot. Proven.
input $g2:2

b0:
    mul $g10:2, $g2:2, $g2:2
    send.scratch_write 0, $g10:2
    send.scratch_read $g14:2, 0
    add $g12:2, $g14:2, $g2:2
    send.tex $g120:4, $g12:2
    send.eot $g120:4
    end
