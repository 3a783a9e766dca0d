shader channel_swap
target r600
stage vertex
form machine
# The moves in two groups: the first overwrites R1.x while the second still
# needs its old value. A clobber violation at b0, bundle 0.
input $R1.x
input $R1.y

b0:
    { x: mov $R1.x, $R1.y }             # R1.x (%a) is overwritten before group 1 reads it
    { y: mov $R1.y, $R1.x }
    { cf: export 0, $R1.x }
    { cf: export 1, $R1.y }
    end
