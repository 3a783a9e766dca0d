# expect: proven
# the machine program the old verifier rejected (a correct one)
shader loop_closed_class
target v3d71
stage fragment
form machine

b0:
    { sig: ldunifrf $rf4, 2 }
    { add: sub $rf5, $rf4, 0 }
    { add: mov $rf4, 2 }
    jmp b1

b1:
    { add: sub $rf4, $rf4, 1 }
    brnz $rf4, b2, b3

b2:
    jmp b1

b3:
    { add: tlbw $rf5 }
    { add: tlbw $rf5 ; sig: thrsw }
    { }
    { }
    end
