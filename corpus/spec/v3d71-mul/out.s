shader uniform_times_varying
target v3d71
stage fragment
form machine
# Correct schedule: the uniform is copied out of rf0 before ldvary's result
# lands there, and the empty bundle waits for the varying to arrive. Proven.
input $rf1

b0:
    { sig: ldunif 0 }
    { add: mov $rf4, $rf0 ; sig: ldvary 0 }
    # wait: ldvary's write to rf0 is visible from bundle 3 on
    { }
    { mul: fmul $rf5, $rf4, $rf0 }
    { mul: fmul $rf5, $rf5, $rf1 }
    { add: tlbw $rf5 ; sig: thrsw }
    { }
    { }
    end
