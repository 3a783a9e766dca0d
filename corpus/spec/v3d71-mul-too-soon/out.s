shader uniform_times_varying
target v3d71
stage fragment
form machine
# The same schedule without its wait: bundle 2 reads rf0 one cycle before
# ldvary's write (issued in bundle 1, latency 2) lands, so it multiplies the
# uniform by itself. A latency violation at b0, bundle 2.
input $rf1

b0:
    { sig: ldunif 0 }
    { add: mov $rf4, $rf0 ; sig: ldvary 0 }
    { mul: fmul $rf5, $rf4, $rf0 }      # rf0 still holds the uniform here
    { mul: fmul $rf5, $rf5, $rf1 }
    { add: tlbw $rf5 ; sig: thrsw }
    { }
    { }
    end
