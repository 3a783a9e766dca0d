shader spill_fill
target gen8
stage fragment
form machine
# The same spill with the fill into g126:2, which covers g127: gen8 forbids
# g127 in a send's destination when its source overlaps it. A register
# violation at b0, bundle 2, although the values would be right.
input $g2:2

b0:
    mul $g10:2, $g2:2, $g2:2
    send.scratch_write 0, $g10:2
    send.scratch_read $g126:2, 0        # the destination covers g127
    add $g12:2, $g126:2, $g2:2
    send.tex $g120:4, $g12:2
    send.eot $g120:4
    end
